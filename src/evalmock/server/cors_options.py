"""CORS as `evalmock serve` answers it (and `evalmock proxy`, which adds its own header to the exposed ones)."""

from __future__ import annotations

from typing import Any

CORS_OPTIONS: dict[str, Any] = {
    "allow_origins": ["*"],
    "allow_methods": ["GET"],
    "allow_headers": ["*"],  # Starlette echoes the requested headers, so Authorization and Prefer pass
    "expose_headers": ["X-Request-Id", "Retry-After", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"],
    "max_age": 600,
}
