"""Every error Rescind raises on purpose, in one tree, at the bottom of the import graph.

    RescindError              a sentence a person can act on; nothing was changed
      NotFound                no such memory, source, action, retraction, tenant or token
      Conflict                the request clashes with what is stored
        IdInUse               an operation id already names another operation
        Duplicate             the source is already retracted over an overlapping window
        StalePreview          the graph moved since the preview; preview again
      Invalid                 input that cannot be applied as given
        BadTenantName         a tenant name that could reach a key is malformed
      Unauthenticated         no token, or one that is unknown or revoked
      Forbidden               the token's tenant or role may not do this
      Unavailable             a server or worker Rescind needs cannot be reached or started
      GateRefused             the payment gate said no, or could not be asked: do not run
        (subclasses where a caller acts on the difference: UnknownPremise, UnknownAction,
        ScenarioError, ServerError, ApiPortError, ...)

The engine and operator layers raise these; each surface translates them once (HTTP status in
``rescind.api.app``, tool error in ``rescind.api.mcp``, exit code 2 and the message in
``rescind.cli.main``) and never renames them on the way. Anything else that escapes (a
``CypherError`` from FalkorDB, a bug) is not a refusal: the API answers 500 and the CLI shows
the traceback.
"""

from __future__ import annotations


class RescindError(Exception):
    """Base of every error Rescind raises on purpose; ``str(err)`` is the whole message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(RescindError, LookupError):
    """No such memory, source, action, retraction, tenant or token."""


class Conflict(RescindError):
    """The request clashes with what is stored (a stale preview, an id in use, a recall approved
    already, a tenant that exists)."""


class IdInUse(Conflict):
    """The operation's id names a different operation already committed (or undone)."""


class Duplicate(Conflict):
    """The same source is already retracted, still in force, over an overlapping window;
    ``existing`` holds those retractions' ids. Forcing records another anyway."""

    def __init__(self, message: str, existing: list[str]) -> None:
        super().__init__(message)
        self.existing = existing


class StalePreview(Conflict):
    """The graph moved since the preview was taken: preview again, then commit."""


class Invalid(RescindError, ValueError):
    """Input that cannot be applied as given (a window that ends first, a time with no zone)."""


class TooLarge(Invalid):
    """A request body over the limit."""


class BadTenantName(Invalid):
    """A tenant name that could reach a key must match [a-z0-9_-]{1,64}."""


class Unauthenticated(RescindError):
    """No token, or one that is unknown or revoked."""


class Forbidden(RescindError):
    """The token is for another tenant, or its role may not do this."""


class Unavailable(RescindError):
    """A server, port or worker Rescind needs cannot be reached or started."""


class GateRefused(RescindError):
    """The gate said no, or could not be asked: the action tool must not run."""


# Each surface's translation, most specific class first (looked up along the class's MRO).
HTTP_STATUS: dict[type[RescindError], int] = {
    TooLarge: 413, NotFound: 404, Conflict: 409, Invalid: 422, Unauthenticated: 401,
    Forbidden: 403, Unavailable: 503, GateRefused: 403, RescindError: 400,
}


def http_status(err: RescindError) -> int:
    """The HTTP status an error is answered with: its nearest class in ``HTTP_STATUS``."""
    return next(HTTP_STATUS[c] for c in type(err).__mro__ if c in HTTP_STATUS)


__all__ = ["BadTenantName", "Conflict", "Duplicate", "Forbidden", "GateRefused", "IdInUse",
           "Invalid", "NotFound", "RescindError", "StalePreview", "TooLarge", "Unauthenticated",
           "Unavailable", "http_status"]
