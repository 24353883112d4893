"""The server: a thin Connexion adapter between the documents, the world and HTTP clients."""

import warnings

from evalmock.server import deferred_imports

# Connexion imports Starlette's test client at import time, which warns on every `evalmock serve`
# start.
warnings.filterwarnings(
    "ignore", message=r"Using `httpx` with `starlette\.testclient` is deprecated"
)

deferred_imports.decline_unused()
