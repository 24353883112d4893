"""A copy of the OpenAPI documents as a revision of the page would leave them: a new filter, runId,
declared without a rule of its own, and kind's rule taken away. Tests point EVALMOCK_OPENAPI_DIR
at it to see what changes with no change to the code."""

from __future__ import annotations

import shutil
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
