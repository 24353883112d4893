"""The command line's value types and its parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evalmock.defaults import DEFAULT_CASES, DEFAULT_SEED, MAX_SECONDS
from evalmock.nouns import counted
from evalmock.option_numbers import (  # noqa: F401  (the command line's types, in one place)
    DECIMAL,
    port,
    positive,
    retries,
    seed,
    shown,
    whole_number,
    workers,
)


def latency_ms(text: str) -> tuple[int, int]:
    """`200` or `50-400` (milliseconds) -> (low, high)."""
    low, _, high = text.partition("-")
    if not all(DECIMAL.fullmatch(part) for part in (low, high or low)):
        raise argparse.ArgumentTypeError(
            f"expected MS or MIN-MAX in milliseconds, got {shown(text)}"
        )
    bounds = (int(low), int(high or low))
    if bounds[0] < 0 or bounds[1] < bounds[0] or bounds[1] > 60_000:
        raise argparse.ArgumentTypeError("latency must satisfy 0 <= MIN <= MAX <= 60000 ms")
    return bounds


T = TypeVar("T")


def parsed(text: str, parse: Callable[[str], T], expected: str) -> T:
    try:
        return parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown(text)}") from None


def error_rate(text: str) -> float:
    rate = parsed(text, float, "a number from 0 to 1")
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError("the error rate must be between 0 and 1")
    return rate


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds, got {shown(text)}"
        ) from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most {counted(MAX_SECONDS, 'second', 'g')}"
        )
    return value


def bearer_token(text: str) -> tuple[str, str]:
    from evalmock.server.auth import parse_token_option

    try:
        return parse_token_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class Parser(argparse.ArgumentParser):
    """argparse's parser, but options are never taken by a prefix (`--base-ur` is not `--base-url`),
    and an unknown option is told by the command it was given to, in its usage, with the closest
    option it has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        # the deepest (sub)command's parser is the one left in the namespace
        self.set_defaults(parsed_by=self)

    def parse_args(
        self,
        args: Sequence[str] | None = None,  # type: ignore[override]
        namespace: argparse.Namespace | None = None,
    ) -> argparse.Namespace:
        parsed, unknown = self.parse_known_args(args, namespace)
        given: argparse.ArgumentParser = vars(parsed).pop("parsed_by", self)
        if unknown:
            import difflib  # only for this error: every start would pay for its import

            guess = difflib.get_close_matches(
                unknown[0].split("=", 1)[0], list(given._option_string_actions), n=1
            )
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            given.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
        return parsed


def world_options(parser: argparse.ArgumentParser, *, cases: bool = True) -> None:
    """The options that choose a world, as every command that builds one takes them: its seed,
    and (unless `cases` is False) its size."""
    parser.add_argument(
        "--seed", type=seed, default=DEFAULT_SEED, help=f"world seed (default {DEFAULT_SEED})"
    )
    if cases:
        parser.add_argument(
            "--cases",
            type=positive,
            default=DEFAULT_CASES,
            help=f"generated cases per agent and project (default {DEFAULT_CASES})",
        )
