"""What a request asks for, as the targets name it: a project of an agent, or a test case."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# (API, agent id, project id) or (API, test case uuid, ""), lower-case ids
TargetKey = tuple[str, str, str]
TARGET_NAMES = {"test-set": "a project", "gradient": "a test case"}


def target_key(api: str, path_parameters: Mapping[str, Any], query: Mapping[str, Any]) -> TargetKey:
    """What a request of `api` asks for, as the targets name it (a project of an agent, a test
    case)."""
    if api == "test-set":
        project = query.get("projectId")
        project = project[0] if isinstance(project, list) and project else project
        return api, str(path_parameters.get("agentId", "")), str(project or "").lower()
    return api, str(path_parameters.get("test_case_uuid", "")).lower(), ""
