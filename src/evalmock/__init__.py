"""evalmock: mock server and contract-test harness for agent-evaluation test-case APIs."""

__version__ = "0.1.0"
