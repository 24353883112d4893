"""The targets file: known-good identifiers and facts about a target implementation, in TOML or
YAML.

Shared by the server (which writes one for its world) and the harness (which reads one to audit a
target).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from evalmock.contract.spelling import unknown_key
from evalmock.exits import UsageError
from evalmock.input_files import read_bounded
from evalmock.whole_file import write_whole

AUTH_KEYS = ("token", "second_token", "expired_token", "revoked_token", "no_read_token")


MAX_TARGETS_BYTES = 16 * 2**20  # a targets file lists ids and facts: a few KB


class TargetsError(UsageError, ValueError):
    """A targets file that cannot be read or does not have the documented shape."""


@dataclass(frozen=True)
class ProjectTarget:
    """An agent and one of its projects that exist in the target, with optional facts about its
    cases."""

    agent_id: str
    project_id: str
    has_retired: bool | None = (
        None  # True: at least one retired case; enables the retired-filter checks
    )
    has_hand: bool | None = None  # True: at least one active hand case
    has_corrections: bool | None = None  # True: at least one active correction case
    active_cases: int | None = None  # exact number of active cases, when known
    # the moment active_cases was counted (aware, UTC): a count of a list in use holds at one moment
    active_cases_at: datetime | None = None


@dataclass(frozen=True)
class TestCaseTarget:
    """A DigitalOcean evaluation test case that exists in the target, with the versions it has."""

    __test__ = False  # not a pytest test class, despite the name

    uuid: str
    versions: tuple[int, ...] = ()

    @property
    def latest(self) -> int | None:
        return max(self.versions) if self.versions else None


@dataclass(frozen=True)
class Targets:
    """Everything the harness knows about a target beyond its base URL."""

    projects: tuple[ProjectTarget, ...] = ()
    test_cases: tuple[TestCaseTarget, ...] = ()
    token: str | None = None
    second_token: str | None = None  # another caller, for cursor-binding checks
    expired_token: str | None = None  # a token the target issued that has expired: it must get 401
    revoked_token: str | None = None  # a token the target issued and revoked: it must get 401
    no_read_token: str | None = (
        None  # a valid token without read on the listed projects: it must get no cases
    )
    # True: the target seals cursors, so the page's binding rules (same list, filters, caller) apply
    sealed_cursors: bool | None = None
    base_url: str | None = None  # where the service listens, as `evalmock serve` writes it


# Every key a targets file may hold, by table: a misspelled one is refused, never silently ignored.
TABLES = ("auth", "test_set", "gradient")
TOP_LEVEL_KEYS = ("base_url", *TABLES)
TEST_SET_KEYS = ("sealed_cursors", "projects")
GRADIENT_KEYS = ("test_cases",)


def load_targets(path: str | Path) -> Targets:
    """Read a targets file; `.toml` is TOML, anything else YAML (JSON is YAML too)."""
    path = Path(path)
    try:
        text = read_bounded(path, MAX_TARGETS_BYTES).decode("utf-8")
    except OSError as exc:
        raise TargetsError(f"{path}: cannot read targets file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TargetsError(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    try:
        raw = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise TargetsError(
            f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'YAML'}: {exc}"
        ) from exc
    return targets_from_dict(raw or {}, source=str(path))


def targets_from_dict(raw: Any, source: str = "targets") -> Targets:
    """Targets from parsed data; TargetsError naming every problem found, one a line (as data files
    do)."""
    if not isinstance(raw, dict):
        raise TargetsError(f"{source}: the top level must be a table/mapping")
    problems: list[str] = []
    _known_keys(raw, TOP_LEVEL_KEYS, f"{source}: the top level", problems)
    auth = _table(raw, "auth", source, problems)
    test_set = _table(raw, "test_set", source, problems)
    gradient = _table(raw, "gradient", source, problems)
    _known_keys(auth, AUTH_KEYS, f"{source}: [auth]", problems)
    _known_keys(test_set, TEST_SET_KEYS, f"{source}: [test_set]", problems)
    _known_keys(gradient, GRADIENT_KEYS, f"{source}: [gradient]", problems)
    projects = [
        _build(ProjectTarget, _moment(item, where, problems), where, problems)
        for i, item in enumerate(_list(test_set, "projects", source, problems))
        for where in [f"{source}: test_set.projects[{i}]"]
    ]
    test_cases = []
    for i, item in enumerate(_list(gradient, "test_cases", source, problems)):
        where = f"{source}: gradient.test_cases[{i}]"
        if isinstance(item, dict) and "versions" in item:
            versions = item["versions"]
            if not isinstance(versions, list) or not all(isinstance(v, int) for v in versions):
                problems.append(f"{where}.versions must be a list of integers")
                continue
            item = {**item, "versions": tuple(versions)}
        test_cases.append(_build(TestCaseTarget, item, where, problems))
    sealed = test_set.get("sealed_cursors")
    if sealed is not None and not isinstance(sealed, bool):
        problems.append(f"{source}: test_set.sealed_cursors must be true or false")
    for key in AUTH_KEYS:
        if auth.get(key) is not None and not isinstance(auth[key], str):
            problems.append(f"{source}: auth.{key} must be a string")
    base_url = raw.get("base_url")
    if base_url is not None and not isinstance(base_url, str):
        problems.append(f"{source}: base_url must be a string, got {base_url!r}")
    if problems:
        raise TargetsError("\n".join(problems))
    return Targets(
        projects=tuple(projects),
        test_cases=tuple(test_cases),
        **{key: auth.get(key) for key in AUTH_KEYS},
        sealed_cursors=sealed,
        base_url=base_url,
    )


def _moment(item: Any, where: str, problems: list[str]) -> Any:
    """The project table with its active_cases_at read as an aware UTC datetime: a TOML or YAML
    date-time with an offset, or an RFC 3339 string (JSON has no date-time)."""
    if not isinstance(item, dict) or item.get("active_cases_at") is None:
        return item
    value = item["active_cases_at"]
    moment = None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
    if moment is None or moment.tzinfo is None:
        problems.append(
            f"{where}.active_cases_at must be a date-time with its offset, such as "
            f"2026-11-21T09:00:00Z, got {value!r}"
        )
        return {**item, "active_cases_at": None}
    return {**item, "active_cases_at": moment.astimezone(UTC)}


def rfc3339(moment: datetime) -> str:
    """A moment as a targets file writes it: `2026-11-21T09:00:00Z` (UTC, whole seconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dump_targets(targets: Targets, path: str | Path) -> None:
    """Write targets as TOML when the path ends in `.toml`, else as YAML."""
    path = Path(path)
    data = targets_to_dict(targets)
    text = _to_toml(data) if path.suffix == ".toml" else yaml.safe_dump(data, sort_keys=False)
    # a running server rewrites it after a reload, maybe while a harness reads it
    write_whole(path, text)


def targets_to_dict(targets: Targets) -> dict[str, Any]:
    auth = {key: getattr(targets, key) for key in AUTH_KEYS if getattr(targets, key)}
    data: dict[str, Any] = {}
    if targets.base_url:
        data["base_url"] = targets.base_url
    if auth:
        data["auth"] = auth
    test_set: dict[str, Any] = {}
    if targets.sealed_cursors is not None:
        test_set["sealed_cursors"] = targets.sealed_cursors
    test_set["projects"] = [_written(_drop_none(asdict(p))) for p in targets.projects]
    data["test_set"] = test_set
    data["gradient"] = {
        "test_cases": [{"uuid": t.uuid, "versions": list(t.versions)} for t in targets.test_cases]
    }
    return data


def _written(item: dict[str, Any]) -> dict[str, Any]:
    """A project as written: its moment in RFC 3339, as TOML, YAML and JSON all read it."""
    moment = item.get("active_cases_at")
    return {**item, "active_cases_at": rfc3339(moment)} if moment is not None else item


def _drop_none(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if v is not None}


def _table(raw: dict[str, Any], key: str, source: str, problems: list[str]) -> dict[str, Any]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        problems.append(f"{source}: [{key}] must be a table/mapping")
        return {}
    return value


def _list(table: dict[str, Any], key: str, source: str, problems: list[str]) -> list[Any]:
    value = table.get(key) or []
    if not isinstance(value, list):
        problems.append(f"{source}: {key} must be a list")
        return []
    return value


def _known_keys(
    table: dict[str, Any], known: Iterable[str], where: str, problems: list[str]
) -> bool:
    """Each key of `table` that is not `known` is a problem, naming the key it most likely meant;
    True: none."""
    known = list(known)
    unknown = [f"{where}: {unknown_key(str(key), known)}" for key in table if key not in known]
    problems += unknown
    return not unknown


def _build(cls: type, item: Any, where: str, problems: list[str]) -> Any:
    """`cls` from one table, or None with its every problem added."""
    if not isinstance(item, dict):
        problems.append(f"{where} must be a table/mapping")
        return None
    before = len(problems)
    known = _known_keys(item, [spec.name for spec in fields(cls)], where, problems)
    missing = [
        spec.name
        for spec in fields(cls)
        if spec.default is MISSING and spec.default_factory is MISSING and spec.name not in item
    ]
    if missing and known:  # else a misspelled key is likely the missing one, and is said so already
        problems.append(f"{where}: missing {', '.join(missing)}")
    for name, value in item.items():
        expected = _FIELD_TYPES.get(name)
        # bool is an int in Python; a count or version given as true/false is still a mistake
        if expected and not (
            isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        ):
            problems.append(f"{where}.{name} must be {_TYPE_WORDS[expected]}, got {value!r}")
    return cls(**item) if len(problems) == before else None


_FIELD_TYPES: dict[str, type] = {
    "agent_id": str,
    "project_id": str,
    "uuid": str,
    "has_retired": bool,
    "has_hand": bool,
    "has_corrections": bool,
    "active_cases": int,
}
_TYPE_WORDS = {str: "a string", bool: "true or false", int: "a whole number"}


def _to_toml(data: dict[str, Any]) -> str:
    # The targets shape is shallow (tables of scalars and arrays of tables), so a small writer
    # suffices.
    lines = [
        "# evalmock targets: known-good identifiers and facts about a target implementation",
        "",
    ]
    # TOML's top-level keys come before its first table
    lines += [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    if len(lines) > 2:
        lines.append("")
    for section, body in data.items():
        if not isinstance(body, dict):
            continue
        scalars = {k: v for k, v in body.items() if not isinstance(v, list)}
        if scalars:
            lines.append(f"[{section}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
            lines.append("")
        for key, items in body.items():
            if isinstance(items, list):
                for item in items:
                    lines.append(f"[[{section}.{key}]]")
                    lines += [f"{k} = {_toml_value(v)}" for k, v in item.items()]
                    lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid TOML basic string
