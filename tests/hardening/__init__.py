"""Hardening: the served APIs under bad input, fuzzing and load, over a real socket."""
