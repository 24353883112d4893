"""A module-level app for ASGI servers (`uvicorn evalmock.server.asgi:app`), configured from the environment.

`evalmock serve --workers N` starts N processes that each import this module; they read the same settings
(and so the same cursor key) from EVALMOCK_SERVE_SETTINGS. Without it, the defaults apply.
"""

from evalmock.server.app import create_app
from evalmock.server.runner import freeze_startup_objects
from evalmock.server.settings import ServerSettings

app = create_app(ServerSettings.from_env())
freeze_startup_objects()  # each worker process, as the single-process path does
