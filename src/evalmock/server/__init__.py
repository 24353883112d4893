"""The server: a thin Connexion adapter between the documents, the world and HTTP clients."""

import sys
import warnings

# Connexion imports Starlette's test client at import time, which warns on every `evalmock serve` start.
warnings.filterwarnings("ignore", message=r"Using `httpx` with `starlette\.testclient` is deprecated")

# That test client imports httpx, whose package then imports its command-line client (`httpx._main`: rich,
# pygments, click) because those happen to be installed. No server runs httpx's command line, so the import is
# declined the way httpx itself expects when they are not installed: its `__init__` catches the ImportError and
# `httpx.main` only says how to install them. The rest of httpx is untouched. Saves ~0.1 s and 4 MiB a process.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]
