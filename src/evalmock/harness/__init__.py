"""The harness: audit any implementation against the contract (Schemathesis plus semantic checks)."""
