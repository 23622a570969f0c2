"""marshmallow schemas per use case: request validation, response shapes, the OpenAPI document."""
