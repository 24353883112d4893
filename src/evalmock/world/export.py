"""`evalmock fixtures export | list | schema`: write a world (or a slice) as a data file, list the
curated fixture cases, or write the data file's JSON Schema."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import best_match

from evalmock.contract.filters import narrowing
from evalmock.contract.operations import operation
from evalmock.exits import FAILED, OK, USAGE, UsageError
from evalmock.whole_file import staged
from evalmock.world.data_schema import data_file_schema, render
from evalmock.world.short_form import shortened
from evalmock.world.world import CaseQuery, World


def run_fixtures(args: argparse.Namespace) -> int:
    try:
        if args.fixtures_command == "export":
            return export(args)
        if args.fixtures_command == "list":
            return list_fixtures(World(seed=args.seed, cases=1), sys.stdout)
        if args.fixtures_command == "schema":
            with _open_output(args.output) as out:
                out.write(render(data_file_schema()))
            return OK
    except UsageError as exc:
        print(f"evalmock fixtures: {exc}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # the reader left early (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILED
    raise AssertionError(args.fixtures_command)  # argparse rejects unknown actions


def export(args: argparse.Namespace) -> int:
    world = World(seed=args.seed, cases=args.cases)
    shorthands = [f"kind={args.kind}"] * (args.kind is not None) + [
        "include=retired"
    ] * args.include_retired
    chosen = parse_filters([*shorthands, *args.filter])
    test_cases = select_test_cases(world, args.test_case)
    some_lists = args.agent is not None or args.project is not None
    if some_lists or test_cases is not None:  # a slice: only what its flags name
        lists = select_lists(world, args.agent, args.project) if some_lists else []
    else:
        lists, test_cases = (
            select_lists(world, None, None),
            list(world.evaluation_test_case_versions()),
        )
    with _open_output(args.output) as out:
        write_export(world, out, lists, chosen, args.limit, test_cases or [], short=args.short)
    return OK


def parse_filters(given: list[str]) -> dict[str, str]:
    """`NAME=VALUE` for filters the document declares, each value one the document's schema of
    that parameter allows (UsageError naming the filters, or what the value breaks)."""
    declared = {one.name: one for one in narrowing()}
    parameters = operation("test-set").query_parameters()
    chosen: dict[str, str] = {}
    for text in given:
        name, equals, value = text.partition("=")
        if name not in declared or not equals:
            raise UsageError(
                f"--filter takes NAME=VALUE, NAME one of the list's filters: "
                f"{', '.join(declared)}; got {text!r}"
            )
        if name in chosen and chosen[name] != value:
            raise UsageError(f"--filter {name} given twice: {chosen[name]!r} and {value!r}")
        error = best_match(Draft7Validator(parameters[name]["schema"]).iter_errors(value))
        if error is not None:
            raise UsageError(f"--filter {name}={value!r}: {error.message}")
        chosen[name] = value
    return chosen


def select_lists(
    world: World, agent_id: str | None, project_id: str | None
) -> list[tuple[str, str]]:
    """The (agent, project) pairs to export, in the world's order."""
    if agent_id is not None and not world.has_agent(agent_id):
        raise UsageError(f"unknown agent {agent_id!r}; agents: {', '.join(world.agent_ids())}")
    agents = [agent_id] if agent_id is not None else world.agent_ids()
    pairs = [(agent, project) for agent in agents for project in world.project_ids(agent)]
    if project_id is not None:
        pairs = [(agent, project) for agent, project in pairs if project == project_id.lower()]
        if not pairs:
            owner = f"agent {agent_id!r}" if agent_id else "any agent"
            raise UsageError(f"project {project_id!r} is not a project of {owner}")
    return pairs


def select_test_cases(world: World, uuids: list[str] | None) -> list[str] | None:
    """The evaluation test cases `--test-case` names (lower-cased), or None when it names none."""
    if not uuids:
        return None
    known = world.evaluation_test_case_versions()
    unknown = [uuid for uuid in uuids if uuid.lower() not in known]
    if unknown:
        raise UsageError(
            f"unknown evaluation test case {unknown[0]!r}; test cases: {', '.join(known)}"
        )
    return list(dict.fromkeys(uuid.lower() for uuid in uuids))


def write_export(
    world: World,
    out: IO[str],
    lists: list[tuple[str, str]],
    filters: dict[str, str],
    limit: int | None,
    test_cases: list[str],
    *,
    short: bool = False,
) -> None:
    """Stream the data file case by case, so a large world never sits in memory (`evalmock serve
    --data` reads it). `filters`: the list's filters by their parameters' names, as a request
    sends them; `short`: each case without what loading fills back as it is."""
    out.write("{\n")
    out.write(f'  "seed": {world.seed},\n  "casesPerProject": {world.cases},\n')
    out.write(f'  "filters": {_dumps({**filters, "limit": limit})},\n')
    out.write('  "testSet": [')
    for number, (agent_id, project_id) in enumerate(lists):
        query = CaseQuery.asked(agent_id, project_id, filters)
        head = _dumps({"agentId": agent_id, "projectId": project_id})[:-1]
        out.write(f'{"," if number else ""}\n    {head}, "cases": [')
        for index, case in enumerate(_limited(world.iter_cases(query), limit)):
            written = shortened(case, project_id) if short else case
            out.write(f"{',' if index else ''}\n      {_dumps(written)}")
        out.write("\n    ]}")
    out.write("\n  ]")
    if test_cases:
        out.write(',\n  "gradient": [')
        versions_of = world.evaluation_test_case_versions()
        for number, uuid in enumerate(test_cases):
            bodies = [world.evaluation_test_case(uuid, version) for version in versions_of[uuid]]
            out.write(
                f"{',' if number else ''}\n    "
                f"{_dumps({'test_case_uuid': uuid, 'versions': bodies})}"
            )
        out.write("\n  ]")
    out.write("\n}\n")


def list_fixtures(world: World, out: IO[str]) -> int:
    """One line per curated case: where it comes from, where it lives, what it is, and why it
    exists."""
    for curated in world.curated:
        case = curated.case
        flags = [case["kind"]] + [flag for flag in ("retired", "expert") if flag in case]
        out.write(
            f"{curated.source}\t{curated.agent_id}\t{curated.project_id}\t{case['id']}\t"
            f"{','.join(flags)}\t{case['addedAt']}\t{curated.note}\n"
        )
    return OK


def _limited(cases: Iterator[dict[str, Any]], limit: int | None) -> Iterator[dict[str, Any]]:
    for count, case in enumerate(cases):
        if limit is not None and count >= limit:
            return
        yield case


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@contextlib.contextmanager
def _open_output(path: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with staged(path) as handle:  # it may go over a data file a running server watches
        yield handle
