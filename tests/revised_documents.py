"""Copies of the OpenAPI documents as a revision of the page would leave them: a new filter, runId,
declared without a rule of its own, and kind's rule taken away; or limit's numbers moved. Tests
point EVALMOCK_OPENAPI_DIR at one to see what changes with no change to the code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from evalmock.paths import openapi_dir

KIND_RULE = "case-rule: cases_have_the_requested_kinds, "
# What a maintainer writes when the page gains a runId filter: its declaration, after kind's.
RUN_ID_AFTER = "        - name: limit\n"
RUN_ID_PARAMETER = """        - name: runId
          in: query
          required: false
          description: Only cases of this run.
          schema:
            type: string
          x-evalmock-query: {narrows: true, case-field: runId, cursor-binds: true, bad-value: page}
"""


def with_a_run_id_filter(folder: Path) -> Path:
    """The documents, copied into `folder`, with runId declared and kind's rule taken away."""
    documents = folder / "openapi"
    shutil.copytree(openapi_dir(), documents)
    test_set = documents / "agent-test-set.yaml"
    text = test_set.read_text(encoding="utf-8")
    assert text.count(KIND_RULE) == 1 and text.count(RUN_ID_AFTER) == 1
    text = text.replace(KIND_RULE, "").replace(RUN_ID_AFTER, RUN_ID_PARAMETER + RUN_ID_AFTER)
    test_set.write_text(text, encoding="utf-8")
    return documents


# What a maintainer writes when the page's limit becomes 1..200, default 50: its description, its
# schema's numbers and the page's words for them.
# (the page's words first: they hold "default: 25" too)
LIMIT_NOW = ("default: 25 >= 1 <= 100", "1..100. Default 25.", "maximum: 100", "default: 25")
LIMIT_REVISED = ("default: 50 >= 1 <= 200", "1..200. Default 50.", "maximum: 200", "default: 50")


def with_a_revised_limit(folder: Path) -> Path:
    """The documents, copied into `folder`, with limit 1..200, default 50."""
    documents = folder / "openapi"
    shutil.copytree(openapi_dir(), documents)
    test_set = documents / "agent-test-set.yaml"
    text = test_set.read_text(encoding="utf-8")
    for now, revised in zip(LIMIT_NOW, LIMIT_REVISED, strict=True):
        assert now in text, now
        text = text.replace(now, revised)
    test_set.write_text(text, encoding="utf-8")
    return documents


def run_under(
    documents: Path, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python args...` in the worktree, the package reading the OpenAPI documents in `documents`
    (it reads its documents once a process, so another set is read by another process)."""
    return subprocess.run(
        [sys.executable, *args],
        env={**os.environ, "EVALMOCK_OPENAPI_DIR": str(documents)},
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
