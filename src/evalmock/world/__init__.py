"""The world: deterministic, lazily generated data served by the mock (no HTTP here)."""
