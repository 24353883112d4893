"""Stable 64-bit hashes and a tiny counter-based stream: the world's only source of variety."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

MASK64 = (1 << 64) - 1
MASK48 = (1 << 48) - 1


def stable_hash(*parts: object) -> int:
    """A 64-bit hash of `parts` that is the same in every process (unlike the built-in `hash`)."""
    text = "\x1f".join(f"{type(part).__name__}:{part}" for part in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def splitmix64(state: int) -> int:
    """One splitmix64 output for a 64-bit state (a bijection, so distinct states never collide)."""
    z = (state + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


_MIX_A, _MIX_B = 0x9E3779B97F4B, 0xBF58476D1CE5  # odd multipliers: invertible modulo 2**48


def mix48(value: int) -> int:
    """A bijection on 48-bit integers: distinct inputs give distinct ids within one list."""
    x = value & MASK48
    x ^= x >> 24
    x = (x * _MIX_A) & MASK48
    x ^= x >> 21
    x = (x * _MIX_B) & MASK48
    x ^= x >> 25
    return x


def unmix48(value: int) -> int:
    """The inverse of `mix48`: which 48-bit input gave `value`."""
    x = value & MASK48
    x ^= x >> 25
    x = (x * pow(_MIX_B, -1, 1 << 48)) & MASK48
    x ^= (x >> 21) ^ (x >> 42)
    x = (x * pow(_MIX_A, -1, 1 << 48)) & MASK48
    x ^= x >> 24
    return x


class Stream:
    """Deterministic draws from one 64-bit seed (no global state).

    Built on `random.Random(seed).random()`, whose sequence for an integer seed Python guarantees to
    keep across versions and machines; it is several times cheaper per case than hashing every draw.
    """

    __slots__ = ("_random",)

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed & MASK64)

    def below(self, bound: int) -> int:
        """An int in [0, bound)."""
        return int(self._random.random() * bound)

    def between(self, low: int, high: int) -> int:
        """An int in [low, high], both ends included."""
        return low + self.below(high - low + 1)

    def chance(self, percent: int) -> bool:
        return self.below(100) < percent

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def sample(self, items: Sequence[T], count: int) -> list[T]:
        """`count` distinct items (by position), in draw order."""
        pool = list(items)
        picked: list[T] = []
        for _ in range(min(count, len(pool))):
            picked.append(pool.pop(self.below(len(pool))))
        return picked

    def shuffled(self, items: Sequence[T]) -> list[T]:
        pool = list(items)
        for i in range(len(pool) - 1, 0, -1):
            j = self.below(i + 1)
            pool[i], pool[j] = pool[j], pool[i]
        return pool

    def hex(self, digits: int) -> str:
        """`digits` (at most 13) lower-case hex digits."""
        return f"{self.below(1 << (4 * digits)):0{digits}x}"


def uuid_from(*parts: object) -> str:
    """A lower-case RFC 4122 version-4-shaped UUID derived from `parts`."""
    raw = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=16).digest()
    value = int.from_bytes(raw, "big")
    value &= ~(0xF << 76)
    value |= 0x4 << 76  # version 4 shape
    value &= ~(0x3 << 62)
    value |= 0x2 << 62  # RFC 4122 variant
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
