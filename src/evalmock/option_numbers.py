"""The integer options' values: plain decimal digits within documented bounds, for every command's
parser and the pytest plugin's alike."""

from __future__ import annotations

import argparse
import re

from evalmock.defaults import MAX_COUNT, MAX_RETRIES, MAX_SEED, MAX_WORKERS

# A number on the command line is plain ASCII decimal: `int()` would also take " 3", "1_000" and a
# full-width "３", and any number of digits.
DECIMAL = re.compile(r"-?[0-9]{1,30}")
SHOWN = 40  # characters of a refused value quoted in the error; the rest counted


def shown(text: str) -> str:
    """A refused value as an error quotes it: whole when short, else its start and its length."""
    if len(text) <= SHOWN:
        return repr(text)
    return f"{text[:SHOWN]!r}... ({len(text):,} characters)"


def whole_number(text: str, low: int, high: int, expected: str = "a whole number") -> int:
    """`text` as an integer from `low` to `high`: plain decimal digits (a leading `-` where `low`
    allows one), nothing else; ArgumentTypeError saying which bound it breaks."""
    if DECIMAL.fullmatch(text) is None:
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
