"""How Schemathesis is driven: the fairness of its expected statuses and the failures it may drop."""

from __future__ import annotations

from types import SimpleNamespace

import schemathesis

from evalmock.harness.checks import RESPONSE_CHECKS
from evalmock.harness.fuzz import config_dict, keep_failure


def _checks(api: str) -> dict:
    return config_dict(api, seed=42, max_examples=5)["checks"]


def test_a_made_up_cursor_refused_with_400_is_acceptable_positive_data() -> None:
    assert "400" in _checks("test-set")["positive_data_acceptance"]["expected-statuses"]


def test_negative_data_must_get_what_the_pages_say() -> None:
    assert _checks("test-set")["negative_data_rejection"]["expected-statuses"] == ["400", "401"]
    assert _checks("gradient")["negative_data_rejection"]["expected-statuses"] == ["400", "401", "404"]


def test_each_api_runs_only_its_own_response_checks() -> None:
    for api in ("test-set", "gradient"):
        disabled = {name for name, value in _checks(api).items() if value == {"enabled": False}}
        assert disabled == {check.name for check in RESPONSE_CHECKS if check.api != api}


def test_the_configuration_is_valid_for_schemathesis() -> None:
    for api in ("test-set", "gradient"):
        schemathesis.Config.from_dict(config_dict(api, seed=1, max_examples=3, phases=("examples",)))


def test_only_findings_about_made_up_tokens_are_dropped() -> None:
    assert keep_failure(None, SimpleNamespace(scenario="no_auth"), None, None)
    assert keep_failure(None, SimpleNamespace(), None, None)
    assert not keep_failure(None, SimpleNamespace(scenario="invalid_auth"), None, None)
    assert not keep_failure(None, SimpleNamespace(scenario="generated_auth"), None, None)
