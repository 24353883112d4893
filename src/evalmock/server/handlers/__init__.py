"""The operation handlers, one module per API, and the resolver that maps operationIds to them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connexion.resolver import Resolver

from evalmock.server.cursors import CursorSealer
from evalmock.server.handlers.evaluation_test_cases import EvaluationTestCases
from evalmock.server.handlers.test_set import TestSetCases
from evalmock.server.live_world import LiveWorld


def build_handlers(
    live: LiveWorld, sealer: CursorSealer, churn: int = 0
) -> dict[str, Callable[..., Any]]:
    """operationId -> handler, for every operation of both documents, each serving `live.world`
    (its lists moving every `churn` requests, unless 0)."""
    return {
        "listTestSetCases": TestSetCases(live, sealer, churn).list_cases,
        "getEvaluationTestCase": EvaluationTestCases(live).get,
    }


def resolver(handlers: dict[str, Callable[..., Any]]) -> Resolver:
    def resolve(operation_id: str) -> Callable[..., Any]:
        try:
            return handlers[operation_id]
        except KeyError:  # Connexion turns a ValueError, not a KeyError, into a ResolverError
            raise ValueError(f"no handler for operationId {operation_id!r}") from None

    return Resolver(function_resolver=resolve)
