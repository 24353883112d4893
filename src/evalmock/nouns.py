"""A count said with its noun, singular for exactly one: "1 second", "2 seconds", "0.5 seconds"."""

from __future__ import annotations


def counted(number: float, noun: str, spec: str = "", *, plural: str | None = None) -> str:
    """`number` formatted by `spec` (as format() takes it), then `noun`, or its plural (`noun` +
    "s" unless given) for any number not shown as exactly 1 ("1.000 seconds" stays plural)."""
    shown = format(number, spec)
    return f"{shown} {noun_for(number, noun, spec, plural=plural)}"


def noun_for(number: float, noun: str, spec: str = "", *, plural: str | None = None) -> str:
    """The noun alone, as `counted` says it after `number`: for a noun before what it counts
    ("versions 2, 3")."""
    return noun if format(number, spec) == "1" else plural or noun + "s"
