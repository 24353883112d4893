"""Bootstrap for the quick start: create .venv, install evalmock pinned, then serve or test."""

from __future__ import annotations

import compileall
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".evalmock-install"
USAGE = """usage: python3.11 dev.py serve [evalmock serve flags...]
       python3.11 dev.py test [pytest args...]
       python3.11 dev.py evalmock <any evalmock command...>
       python3.11 dev.py engine     # as root on Debian: install and start a Docker engine, make the base images
       python3.11 dev.py image      # the engine step if needed, then the image: evalmock:<version>, evalmock:latest"""


def _install_fingerprint() -> str:
    # Reinstall only when what decides the environment changes.
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_environment() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036  (dev.py may be started by an older python)
        sys.exit("evalmock needs Python 3.11 or newer")
    if not (BIN / "python").exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    fingerprint = _install_fingerprint()
    if not (STAMP.exists() and STAMP.read_text() == fingerprint):
        _install(fingerprint)
    compile_package(ROOT / "src")


def compile_package(src: Path) -> bool:
    """Write the bytecode of what changed under `src` (a few milliseconds when nothing did).

    Python writes a module's bytecode when it first imports it, unless PYTHONDONTWRITEBYTECODE is set; where it
    is, an editable install would compile the package's modules again at every start (about 0.1 s of
    `evalmock serve`'s).
    """
    return bool(compileall.compile_dir(src, quiet=1))


def _install(fingerprint: str) -> None:
    print("installing evalmock and its pinned dependencies into .venv ...", flush=True)
    subprocess.run(
        [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[dev]"],
        check=True,
    )
    STAMP.write_text(fingerprint)


def main(argv: list[str]) -> int:
    if argv[:1] in (["engine"], ["image"]):
        sys.path.insert(0, str(ROOT / "deploy"))
        import engine  # stdlib only: it needs no .venv

        return engine.main(argv)
    if not argv or argv[0] not in {"serve", "test", "evalmock"}:
        print(USAGE, file=sys.stderr)
        return 2
    ensure_environment()
    command, rest = argv[0], argv[1:]
    if command == "serve":
        args = [str(BIN / "evalmock"), "serve", *rest]
    elif command == "test":
        lint = subprocess.run([str(BIN / "ruff"), "check", "."], cwd=ROOT)
        if lint.returncode != 0:
            return lint.returncode
        args = [str(BIN / "python"), "-m", "pytest", *rest]
    else:
        args = [str(BIN / "evalmock"), *rest]
    os.chdir(ROOT)
    os.execv(args[0], args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
