"""Bootstrap for the quick start: create .venv, install evalmock pinned, then serve or test."""

from __future__ import annotations

import compileall
import contextlib
import hashlib
import os
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".evalmock-install"
# The reference pages are beside the checkout, not in the repository; EVALMOCK_PAGES_DIR points
# elsewhere.
PAGES_DIR = Path(os.environ.get("EVALMOCK_PAGES_DIR", ROOT.parent / "shared" / "seeds"))
RULES_DOC = ROOT / "docs" / "rules.md"
# held while .venv is made or filled: two dev.py started at once would both fill it
LOCK = ROOT / ".venv.lock"
USAGE = """usage: python3.11 dev.py serve [evalmock serve flags...]
       python3.11 dev.py test [pytest args...]
       python3.11 dev.py evalmock <any evalmock command...>
       python3.11 dev.py rules-doc  # write docs/rules.md from the code and the reference pages
       python3.11 dev.py engine     # as root on Debian: install and start a Docker engine,
                                    # make the base images
       python3.11 dev.py image      # the engine step if needed, then the images compose.yaml
                                    # runs: evalmock:<version>, evalmock:latest, the
                                    # balancer, evalmock-balancer:latest, and the session
                                    # store, evalmock-store:latest"""


def _install_fingerprint() -> str:
    # Reinstall only when what decides the environment changes.
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_environment() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036  (dev.py may be started by an older python)
        sys.exit("evalmock needs Python 3.11 or newer")
    fingerprint = _install_fingerprint()
    if (BIN / "python").exists() and STAMP.exists() and STAMP.read_text() == fingerprint:
        compile_package(ROOT / "src")
        return
    with _setting_up():  # checked again inside: another dev.py may just have done it
        if not (BIN / "python").exists():
            print("creating .venv ...", flush=True)
            venv.EnvBuilder(with_pip=True).create(VENV)
        if not (STAMP.exists() and STAMP.read_text() == fingerprint):
            _install(fingerprint)
    compile_package(ROOT / "src")


@contextlib.contextmanager
def _setting_up() -> Iterator[None]:
    """Hold LOCK (where the platform has fcntl's locks): a second dev.py waits for the first to
    finish .venv."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock, as before
        yield
        return
    with LOCK.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("waiting for another dev.py to finish setting up .venv ...", flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def compile_package(src: Path) -> bool:
    """Write the bytecode of what changed under `src` (a few milliseconds when nothing did).

    Python writes a module's bytecode when it first imports it, unless PYTHONDONTWRITEBYTECODE is
    set; where it is, an editable install would compile the package's modules again at every start
    (about 0.1 s of `evalmock serve`'s).
    """
    return bool(compileall.compile_dir(src, quiet=1))


def _install(fingerprint: str) -> None:
    print(
        "installing evalmock and its pinned dependencies into .venv "
        "(once; README.md's 'What you wait for' says how long; pip's steps follow) ...",
        flush=True,
    )
    # DigitalOcean's SDKs (the sdk extra) serve only tests/sdk, which skip without them: where they
    # cannot be installed, evalmock still is.
    if _pip_install("dev,sdk").returncode != 0:
        print(
            "dev.py: the sdk extra (DigitalOcean's SDKs, for tests/sdk) could not be installed; "
            "installing without it",
            file=sys.stderr,
            flush=True,
        )
        _pip_install("dev").check_returncode()
    print("installed", flush=True)
    STAMP.write_text(fingerprint)


# pip's lines that say where it is; the rest ("Requirement already satisfied", downloads' sizes,
# the wheel's hash) only scroll the screen. Its errors go to stderr, shown whole.
PIP_STEPS = ("Collecting ", "Building ", "Installing collected packages", "Successfully installed")


def pip_step(line: str) -> str | None:
    """The line to print for one line of pip's output, or None: a step, without the requirement
    that pulled it in, cut to a line's width."""
    line = line.strip()
    if not line.startswith(PIP_STEPS):
        return None
    line = line.split(" (from ", 1)[0]
    return "  " + (line if len(line) <= 100 else line[:97] + "...")


def _pip_install(extras: str) -> subprocess.CompletedProcess[str]:
    """pip install, printing a line for each of its steps as it takes it."""
    command = [
        str(BIN / "python"),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "-c",
        str(ROOT / "constraints.txt"),
        "-e",
        f"{ROOT}[{extras}]",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, errors="replace") as pip:
        assert pip.stdout is not None
        for line in pip.stdout:
            step = pip_step(line)
            if step is not None:
                print(step, flush=True)
    return subprocess.CompletedProcess(command, pip.returncode)


# The suite mostly waits (servers starting, subprocesses, sleeps), so it runs in twice as many
# processes as there are cores; tests/process_groups.py keeps together what must share one process.
PROCESSES_PER_CORE = 2
MAX_PROCESSES = 8  # past this, each process's own servers and worlds cost more than they save
# pytest options by which the caller chose how the tests are spread, or asked for one process.
SPREAD = ("-n", "--numprocesses", "--dist", "--maxprocesses")
ONE_PROCESS = ("--pdb", "--trace", "-pno:xdist", "-p no:xdist")


def parallel_options(rest: list[str]) -> list[str]:
    """pytest-xdist's options that `dev.py test` adds to the caller's: none where the caller chose
    how to spread the tests (or asked for one process); else PROCESSES_PER_CORE processes a core,
    grouped as tests/process_groups.py says."""
    said = " ".join(rest)
    if any(arg.startswith(SPREAD) for arg in rest) or any(x in said for x in ONE_PROCESS):
        return []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    processes = min(MAX_PROCESSES, PROCESSES_PER_CORE * (cores or 1))
    return ["-n", str(processes), "--dist", "loadgroup"]


def main(argv: list[str]) -> int:
    if argv[:1] in (["engine"], ["image"]):
        sys.path.insert(0, str(ROOT / "deploy"))
        import engine  # stdlib only: it needs no .venv

        return engine.main(argv)
    if not argv or argv[0] not in {"serve", "test", "evalmock", "rules-doc"}:
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
        args = [str(BIN / "python"), "-m", "pytest", *parallel_options(rest), *rest]
        # the suite's own configuration and paths; a command's paths stay the caller's
        os.chdir(ROOT)
    elif command == "rules-doc":
        if rest:
            print(USAGE, file=sys.stderr)
            return 2
        code = (
            "import sys; from evalmock.harness.report.rule_tables import write_rules_document; "
            "sys.exit(write_rules_document(sys.argv[1:]))"
        )
        args = [str(BIN / "python"), "-c", code, str(PAGES_DIR), str(RULES_DOC)]
    else:
        args = [str(BIN / "evalmock"), *rest]
    os.execv(args[0], args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
