"""The command line's own errors: a mistyped option is told by the command it was given to, in that
command's usage, with the closest option it has; an option is never taken by a prefix of its
name."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from evalmock import cli
from evalmock.cli import build_parser, main


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "told"),
    [
        (
            ["serve", "--prot", "9000"],
            "evalmock serve: error: unrecognized arguments: --prot 9000 (did you mean --port?)",
        ),
        (
            ["contract", "--base-url", "http://127.0.0.1:9", "--tagets=t.toml"],
            "evalmock contract: error: unrecognized arguments: --tagets=t.toml (did you mean "
            "--targets?)",
        ),
        (
            ["fixtures", "export", "--outptu", "x.json"],
            "evalmock fixtures export: error: unrecognized arguments: --outptu x.json (did you "
            "mean --output?)",
        ),
        (["rules", "--zzz"], "evalmock rules: error: unrecognized arguments: --zzz\n"),
    ],
)
def test_a_mistyped_option_is_told_by_its_command_with_the_closest_option(
    argv: list[str], told: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = usage_error(argv, capsys)
    assert told in err
    assert err.startswith(f"usage: evalmock {told.split(':')[0].removeprefix('evalmock ')} ")


def test_an_option_is_never_taken_by_a_prefix_of_its_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = usage_error(["contract", "--base-ur", "http://127.0.0.1:9"], capsys)
    assert "unrecognized arguments: --base-ur http://127.0.0.1:9 (did you mean --base-url?)" in err


def test_parsed_options_carry_only_the_command_s_own() -> None:
    args = build_parser().parse_args(["serve", "--port", "9000"])
    assert args.command == "serve" and args.port == 9000 and not hasattr(args, "parsed_by")


@pytest.mark.parametrize("command", [["serve"], ["proxy", "--upstream", "http://127.0.0.1:9"]])
@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error_not_a_crash(
    command: list[str], port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = usage_error([*command, "--port", port], capsys)
    assert f"evalmock {command[0]}: error: argument --port: " in err and "Traceback" not in err
    assert (
        "a port is 0..65535 (0: any free one)" if port != "http" else "expected a port number"
    ) in err


@pytest.mark.parametrize(
    ("value", "told"),
    [
        ("0", "must be at least 1"),
        ("-3", "must be at least 1"),
        ("1.5", "expected a whole number, got '1.5'"),
    ],
)
def test_churn_takes_a_whole_number_of_requests_of_at_least_one(
    value: str, told: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = usage_error(["serve", "--churn", value], capsys)
    assert f"evalmock serve: error: argument --churn: {told}" in err


def test_churn_with_several_workers_is_refused_as_their_lists_would_move_apart(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never_served(name: str) -> Any:
        raise AssertionError(f"evalmock {name} ran: the options should have been refused")

    monkeypatch.setattr(cli, "command", never_served)
    err = usage_error(["serve", "--churn", "5", "--workers", "2"], capsys)
    assert "--churn moves each list by the requests one process counts" in err
    assert "serve with --workers 1" in err


def test_churn_is_off_unless_asked_for() -> None:
    assert build_parser().parse_args(["serve"]).churn is None
    assert build_parser().parse_args(["serve", "--churn", "7"]).churn == 7


def test_version_prints_the_installed_version_without_a_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"evalmock {version('evalmock')}\n"


def _integer_options() -> list[tuple[list[str], str]]:
    """Every integer option of every command: (the command's words, the option)."""
    from evalmock import arguments

    integers = {
        arguments.positive,
        arguments.seed,
        arguments.workers,
        arguments.retries,
        arguments.port,
    }
    found: list[tuple[list[str], str]] = []
    pending: list[tuple[list[str], Any]] = [([], build_parser())]
    while pending:
        words, parser = pending.pop()
        for action in parser._actions:
            if action.type in integers:
                found.append((words, action.option_strings[0]))
            if isinstance(action, argparse._SubParsersAction):
                pending += [([*words, name], sub) for name, sub in action.choices.items()]
    return found


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The parser's error for `argv`, parsed only: a value it takes runs no command."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


REQUIRED = {"proxy": ["--upstream", "http://127.0.0.1:9"], "import": ["--har", "a", "-o", "b"]}


def test_every_integer_option_is_found_by_its_type() -> None:
    options = {(" ".join(words), option) for words, option in _integer_options()}
    assert {("serve", "--churn"), ("serve", "--seed"), ("contract", "--workers")} <= options
    assert ("fixtures import", "--seed") in options and ("proxy", "--port") in options
    assert len(options) >= 20


@pytest.mark.parametrize("value", [" 3", "3 ", "1_000", "３", "+3", "0x10", "3.0", "٣"])
def test_every_integer_option_takes_plain_decimal_digits_only(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for words, option in _integer_options():
        required = REQUIRED.get(words[-1], [])
        err = refused([*words, *required, f"{option}={value}"], capsys)
        assert f"argument {option}: expected " in err and repr(value) in err, (words, option)


def test_every_integer_option_has_an_upper_bound(capsys: pytest.CaptureFixture[str]) -> None:
    for words, option in _integer_options():
        required = REQUIRED.get(words[-1], [])
        err = refused([*words, *required, option, "99999999999999999999999"], capsys)
        assert f"argument {option}: " in err and (
            "must be at most" in err or "a port is 0..65535" in err
        ), (words, option, err)


def test_a_long_refused_number_is_not_echoed_whole(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(["serve", "--churn", "9" * 5_000], capsys)
    assert "(5,000 characters)" in err and "9" * 100 not in err


@pytest.mark.parametrize(
    ("argv", "value"),
    [
        (["serve", "--churn", "1000000000"], 1_000_000_000),
        (["serve", "--seed", "0"], 0),
        (["serve", "--workers", "64"], 64),
        (["contract", "--base-url", "http://x", "--throttle-retries", "0"], 0),
    ],
)
def test_integers_within_their_bounds_are_taken(argv: list[str], value: int) -> None:
    args = build_parser().parse_args(argv)
    assert value in vars(args).values()
