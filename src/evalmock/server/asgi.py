"""A module-level app for ASGI servers (`uvicorn evalmock.server.asgi:app`), configured from the
environment.

`evalmock serve --workers N` starts N processes that each import this module; they read the same
settings (and so the same cursor key and data files) from EVALMOCK_SERVE_SETTINGS. Without it, the
defaults apply.
"""

import sys

from evalmock.exits import USAGE
from evalmock.importing import long_lived
from evalmock.server.deferred_imports import defer_unused

defer_unused()  # before the app's modules import Connexion
with long_lived():  # as the `evalmock` command imports its own
    from evalmock.server.app import create_app
    from evalmock.server.runner import freeze_startup_objects, refusal
    from evalmock.server.settings import ServerSettings
    from evalmock.world.data_files import DataFileError

try:
    app = create_app(ServerSettings.from_env())
except (
    DataFileError
) as error:  # a data file broke between `evalmock serve`'s check and this worker's start
    print(refusal(error), file=sys.stderr, flush=True)
    raise SystemExit(USAGE) from None
freeze_startup_objects()  # each worker process, as the single-process path does
