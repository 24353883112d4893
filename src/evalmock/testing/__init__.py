"""A running mock's sessions from a test: a mock started on a free port, a world per test, faults,
the journal and the client verdict (docs/sessions.md).

    from evalmock.testing import start_mock

    with start_mock() as mock:
        session = mock.create_session(cases=3)
        session.fault("test-set", status=503, retry_after=2)
        ...  # point the app under test at session.base_url with session.token
        session.assert_conforms()  # fails with the findings' words
        session.delete()

From pytest, the fixtures `evalmock_mock` and `evalmock_session` do the same (pytest_fixtures.py).
"""

from evalmock.testing.admin_client import Admin, AdminError, Session, Verdict
from evalmock.testing.mock import Mock, MockError, start_mock

__all__ = ["Admin", "AdminError", "Mock", "MockError", "Session", "Verdict", "start_mock"]
