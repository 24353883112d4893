"""Keywords of the test kit written as the admin API's JSON fields (`retryAfter=`): refused naming
the snake_case keyword meant (`retry_after`), not with Python's bare "unexpected keyword"."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """`retryAfter` as `retry_after`; a name without a capital letter stays as it is."""
    return _HUMP.sub(lambda hump: "_" + hump.group(1).lower(), name)


def snake_case_keywords(func: F) -> F:
    """`func`, refusing a camelCase keyword whose snake_case form it takes with a TypeError that
    names the keyword meant; any other keyword gets Python's own error."""
    accepted = frozenset(inspect.signature(func).parameters)

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for name in kwargs:
            if name not in accepted and (meant := snake_case(name)) in accepted:
                raise TypeError(
                    f"{func.__qualname__}() got an unexpected keyword argument {name!r}: did you "
                    f"mean {meant!r}? (the kit's keywords are snake_case; the admin API's JSON "
                    "fields are camelCase)"
                )
        return func(*args, **kwargs)

    return checked  # type: ignore[return-value]
