"""Tests of `evalmock proxy`: pass-through, judging, failures, CORS, redaction, outputs."""
