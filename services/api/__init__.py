"""The HTTP API with roles, and the browser console it serves (``static/``).

``create_app(settings)`` builds the FastAPI application; ``serve`` runs it with uvicorn (in a
thread beside the workers for ``rescind up``). Modules: ``auth`` (tokens and permissions),
``routes`` (endpoints), ``ops`` (what they do, shared with the MCP server), ``asof`` (what was
believed at a moment), ``state`` (what requests share; the Guard, which audits refusals in
``rescind.operator.audit``), ``models`` (bodies and limits),
``errors`` (what is answered), ``keys`` (Redis key names), ``commands`` (`rescind api`).

The names below are loaded on first use, so that the `rescind` command does not import
FastAPI unless it serves the API.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"create_app": "app", "api_routes": "app", "permission_of": "app",
            "PERMISSIONS": "auth", "ROLES": "auth", "Principal": "auth", "TokenStore": "auth"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
