"""A count said with its noun, singular for exactly one: "1 second", "2 seconds", "0.5 seconds"."""

from __future__ import annotations


def counted(number: float, noun: str, spec: str = "", *, plural: str | None = None) -> str:
    """`number` formatted by `spec` (as format() takes it), then `noun`, or its plural (`noun` +
    "s" unless given) for any number not shown as exactly 1 ("1.000 seconds" stays plural)."""
    shown = format(number, spec)
    return f"{shown} {noun if shown == '1' else plural or noun + 's'}"
