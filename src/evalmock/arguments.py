"""The command line's value types and its parser."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evalmock.defaults import MAX_COUNT, MAX_RETRIES, MAX_SECONDS, MAX_SEED, MAX_WORKERS


def latency_ms(text: str) -> tuple[int, int]:
    """`200` or `50-400` (milliseconds) -> (low, high)."""
    low, _, high = text.partition("-")
    if not all(_DECIMAL.fullmatch(part) for part in (low, high or low)):
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


# A number on the command line is plain ASCII decimal: `int()` would also take " 3", "1_000" and a
# full-width "３", and any number of digits.
_DECIMAL = re.compile(r"-?[0-9]{1,30}")
SHOWN = 40  # characters of a refused value quoted in the error; the rest counted


def shown(text: str) -> str:
    """A refused value as an error quotes it: whole when short, else its start and its length."""
    if len(text) <= SHOWN:
        return repr(text)
    return f"{text[:SHOWN]!r}... ({len(text):,} characters)"


def whole_number(text: str, low: int, high: int, expected: str = "a whole number") -> int:
    """`text` as an integer from `low` to `high`: plain decimal digits (a leading `-` where `low`
    allows one), nothing else; ArgumentTypeError saying which bound it breaks."""
    if _DECIMAL.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown(text)}")
    value = int(text)
    if value < low:
        raise argparse.ArgumentTypeError(
            "must be at least 1" if low == 1 else f"must be at least {low:,}"
        )
    if value > high:
        raise argparse.ArgumentTypeError(f"must be at most {high:,}")
    return value


def positive(text: str) -> int:
    return whole_number(text, 1, MAX_COUNT)


def seed(text: str) -> int:
    return whole_number(text, 0, MAX_SEED, "a seed, a whole number")


def workers(text: str) -> int:
    return whole_number(text, 1, MAX_WORKERS)


def retries(text: str) -> int:
    return whole_number(text, 0, MAX_RETRIES)


def port(text: str) -> int:
    value = whole_number(text, -(2**31), 2**31, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0: any free one), got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds, got {shown(text)}"
        ) from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_SECONDS:g} seconds")
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
