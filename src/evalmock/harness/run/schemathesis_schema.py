"""The one home of Schemathesis's configuration: which checks run per API and policy, their expected
statuses, the document each sees, and the hook that points positive cases at known ids (the audit,
bench/ and tests use it)."""

from __future__ import annotations

import functools
import itertools
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis import GenerationMode
from schemathesis.core import NOT_SET
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.transport import Response
from schemathesis.generation.meta import TestPhase

from evalmock import environment
from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.defaults import DEFAULT_MAX_EXAMPLES, DEFAULT_SEED
from evalmock.harness.checks.attribution import builtin_check_names
from evalmock.harness.checks.exchange import NotJson, loads
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.status_rules import EXPECTED_STATUSES
from evalmock.paths import cache_dir

PHASES = ("examples", "coverage", "fuzzing", "stateful")
# Redirects a Schemathesis request follows within the audited origin, at most (its session follows
# none to another origin, where the audit's credentials would go); past them a loop is a gap, named
# once per operation (run/fuzzing.py). requests would follow 30.
MAX_REDIRECTS = 5

# What the pages allow a request to get, per check with expected statuses: EXPECTED_STATUSES, read
# from the documents beside the words that name them (checks/status_rules.py). The 400 for a
# cursor the runtime did not take, and the 400 or 404 for an agent or project the targets do not
# list, are let pass in run/fuzzing.py.


def config_dict(
    api: str,
    policy: Policy,
    *,
    seed: int = DEFAULT_SEED,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    phases: tuple[str, ...] = PHASES,
    extra_checks: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The Schemathesis configuration of one API, as `schemathesis.toml` would say it (no secrets in
    it).

    `extra_checks` are custom checks (registered with `schemathesis.check`) to run besides the
    built-ins.
    """
    enabled = {
        name: {"enabled": True} for name in (*builtin_check_names(api, policy), *extra_checks)
    }
    for name, statuses in EXPECTED_STATUSES[api].items():
        if name in enabled:
            enabled[name]["expected-statuses"] = statuses
    return {
        "seed": seed,
        "continue-on-failure": True,  # report every violation, not only the first of each phase
        "max-redirects": MAX_REDIRECTS,
        "generation": {"max-examples": max_examples, "database": "none"},
        "phases": {
            **{name: {"enabled": name in phases} for name in PHASES},
            # Duplicated query parameters probe the parser too; the checks leave ambiguous requests
            # alone.
            "coverage": {
                "enabled": "coverage" in phases,
                "generate-duplicate-query-parameters": True,
            },
        },
        # Only the checks that apply run: everything else, built-in or custom, is off.
        "checks": {"enabled": False, **enabled},
    }


def load_schema(
    api: str,
    policy: Policy,
    *,
    base_url: str,
    token: str | None = None,
    seed: int = DEFAULT_SEED,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    phases: tuple[str, ...] = PHASES,
    extra_checks: tuple[str, ...] = (),
) -> Any:
    """The API's document as Schemathesis loads it for `policy` (the page view outside the live
    profile), aimed at `base_url` (the service's root) with the bearer token, running exactly the
    checks that apply."""
    read_json_as_a_browser()
    document = api_document(api)
    config = schemathesis.Config.from_dict(
        config_dict(
            api,
            policy,
            seed=seed,
            max_examples=max_examples,
            phases=phases,
            extra_checks=extra_checks,
        )
    )
    config.update(max_failures=None)
    spec = document.judged_spec(live=policy.live)
    schema = schemathesis.openapi.from_dict(spec, config=config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    schema.config.update(base_url=base_url.rstrip("/") + document.base_path, headers=headers)
    # requests reads REQUESTS_CA_BUNDLE, not SSL_CERT_FILE: the audit's one way is told it here
    if (authorities := environment.certificate_authorities()) is not None:
        schema.config.update(tls_verify=authorities)
    return schema


def read_json_as_a_browser() -> None:
    """Schemathesis's checks read an answer's JSON as the audit's do (`exchange.loads`): `NaN` is
    malformed JSON to them too, an integer of 5,000 digits JSON judged by its schema (the standard
    parser, theirs, would raise past 4,300 digits)."""
    if Response.json is not _browser_json:
        Response.json = _browser_json  # type: ignore[method-assign]


def _browser_json(self: Response) -> Any:
    if self._deserialized is NOT_SET:
        try:
            self._deserialized = loads(self.text)
        except NotJson as exc:  # Schemathesis's ST109, "JSON deserialization error"
            raise json.JSONDecodeError(str(exc), self.text, 0) from None
    return self._deserialized


def known_good_case_hook(api: str, targets: Targets) -> Callable[[Any, Any], Any]:
    """A `map_case` hook that points positive cases at things that exist, so they reach the real
    logic."""
    projects = itertools.cycle(targets.projects) if targets.projects else None
    test_cases = itertools.cycle(targets.test_cases) if targets.test_cases else None

    def map_case(context: Any, case: Any) -> Any:
        meta = case.meta
        if meta is None:
            return case
        if meta.generation.mode != GenerationMode.POSITIVE:
            # A negative request about the query goes to a real agent: which of 400 and 404 wins for
            # an unknown agent with a bad parameter, the page does not say.
            if (
                api == "test-set"
                and projects is not None
                and case.path_parameters
                and not meta.is_negative_at(ParameterLocation.PATH)
            ):
                case.path_parameters["agentId"] = targets.projects[0].agent_id
            return case
        if (
            api == "test-set"
            and projects is not None
            and case.path_parameters
            and case.query is not None
        ):
            if meta.phase.name == TestPhase.STATEFUL:
                # The nextPage link carries agentId, projectId and cursor but not the filters, and a
                # sealed cursor is only good for its own list and filters: keep every step on one
                # unfiltered list so the link walks real pages instead of collecting legitimate
                # 400s.
                project = targets.projects[0]
                for name in operation("test-set").query_marked("narrows"):
                    case.query.pop(name, None)
            else:
                project = next(projects)
            case.path_parameters["agentId"] = project.agent_id
            if "projectId" in case.query:
                case.query["projectId"] = project.project_id
        if api == "gradient" and test_cases is not None and case.path_parameters:
            test_case = next(test_cases)
            case.path_parameters["test_case_uuid"] = test_case.uuid
            version = (case.query or {}).get("evaluation_test_case_version")
            # Half of the versions become real ones; the rest keep exercising "a version it does not
            # have".
            if isinstance(version, int) and test_case.versions and version % 2 == 0:
                case.query["evaluation_test_case_version"] = test_case.versions[
                    version % len(test_case.versions)
                ]
        return case

    return map_case


def place_hypothesis_files() -> Path | None:
    """Hypothesis keeps its Unicode tables in `.hypothesis/` in the working folder, which in CI is a
    checkout: an `evalmock contract` run keeps them in evalmock's cache folder instead (a temporary
    one, removed at exit, when keeping is off or the cache folder cannot be written: Hypothesis
    would warn on every test it runs). HYPOTHESIS_STORAGE_DIRECTORY, if set, still wins. Not for the
    pytest plugin, where the folder is the user's project's and its Hypothesis tests' own. Returns
    the folder chosen, if one was."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return None
    kept = cache_dir()
    folder = None if kept is None else kept / "hypothesis"
    # a container's cache is the image's, read-only to its user
    if folder is None or not _writable(folder):
        folder = Path(_unkept_folder().name)
    set_hypothesis_home_dir(folder)
    return folder


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


@functools.cache
def _unkept_folder() -> tempfile.TemporaryDirectory[str]:
    # removed when the process ends
    return tempfile.TemporaryDirectory(prefix="evalmock-hypothesis-")
