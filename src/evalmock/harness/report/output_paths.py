"""Output files (report, JUnit, HAR) checked before any work starts, so that a typo costs seconds,
not an audit."""

from __future__ import annotations

import os
from pathlib import Path


def output_problem(option: str, path: str | os.PathLike[str]) -> str | None:
    """Why `path`, given as `option`, cannot be written, or None when it can. The file is not
    written; its folder is made when missing (`--junit reports/contract.xml` in a fresh checkout, as
    pytest's --junitxml makes it)."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        return f"{option} {str(path)!r} is a directory; give a file name"
    if not folder.exists():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return (
                f"{option} {str(path)!r}: the directory {str(folder)!r} cannot be made "
                f"({exc.strerror or exc})"
            )
    if not folder.is_dir():
        return f"{option} {str(path)!r}: {str(folder)!r} is not a directory"
    if target.exists() and not os.access(target, os.W_OK):
        return f"{option} {str(path)!r} exists and cannot be written"
    if not target.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"{option} {str(path)!r}: the directory {str(folder)!r} cannot be written"
    return None


def outputs_problem(outputs: dict[str, str | None]) -> str | None:
    """The first output (option name -> path; None: not asked for) that cannot be written, as
    `output_problem`."""
    for option, path in outputs.items():
        if path:
            problem = output_problem(option, path)
            if problem:
                return problem
    return None
