"""The contract: the OpenAPI documents of both APIs, how to load them, and how to validate them."""
