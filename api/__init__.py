"""The HTTP API: Falcon resources and middleware (parse, authorize, call one service, serialize)."""
