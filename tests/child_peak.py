"""An `evalmock` command run in a child process of its own, whose peak memory is then its own."""

from __future__ import annotations

import subprocess
import sys

# The child runs the command as its own child and reports that one's peak: the test process's
# memory never counts, however much it holds.
_MEASURE = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], "
    "capture_output=True, text=True); print(done.stdout + done.stderr); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def evalmock_peak(*arguments: str, timeout: float = 300) -> tuple[int, int, str]:
    """`evalmock ARGUMENTS...` in a child of its own: its exit code, its peak RSS in bytes, and
    what it said (stdout, then stderr). Bounded by `timeout` seconds: a busy machine takes
    several times what a quiet one does."""
    command = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "evalmock", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    said, last = done.stdout.rstrip().rsplit("\n", 1)
    code, peak = last.split()
    return int(code), int(peak) * 1024, said
