"""`evalmock proxy`: a reverse proxy in front of a live service that judges every response with the
harness."""
