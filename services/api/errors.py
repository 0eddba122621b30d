"""What the API and the MCP server answer when a request cannot be served; nothing was changed.

    ApiError                 a sentence a person can act on, and an HTTP status
      Unauthenticated  401   no token, or one that is unknown or revoked
      Forbidden        403   the token is for another tenant, or its role may not do this
      NotFound         404   no such memory, action, retraction, tenant or token
      Conflict         409   a stale preview, a recall approved already, a tenant that exists
      TooLarge         413   a body over the limit
      Invalid          422   input the engine refuses (a window that ends first, an unknown source)

Engine errors are mapped to these where they are raised (``ops``), never by their text.
"""

from __future__ import annotations


class ApiError(Exception):
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unauthenticated(ApiError):
    status = 401


class Forbidden(ApiError):
    status = 403


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    status = 409


class TooLarge(ApiError):
    status = 413


class Invalid(ApiError):
    status = 422


__all__ = ["ApiError", "Conflict", "Forbidden", "Invalid", "NotFound", "TooLarge",
           "Unauthenticated"]
