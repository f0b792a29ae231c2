# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The error body both Google wires send (generateContent and Interactions): `{"error": {"code", "message", "status"}}`."""

from __future__ import annotations

from typing import Any

from .canonical import ProviderError


def status_error(body: Any, wire: str) -> ProviderError:
    """The ProviderError an error body states: `status` (`NOT_FOUND`) is its type and code, `code` its HTTP status."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ProviderError(wire, str(error), raw=body)
    code, status = error.get("code"), error.get("status")
    return ProviderError(
        wire,
        str(error.get("message", "")),
        type=status if isinstance(status, str) else None,
        code=status if isinstance(status, str) else None if code is None else str(code),
        status=code if type(code) is int else None,
        raw=body,
    )


def array_error(body: Any, wire: str) -> ProviderError | None:
    """The error of a one-element array holding an error body; None for any other body."""
    if (
        isinstance(body, list)
        and len(body) == 1
        and isinstance(body[0], dict)
        and "error" in body[0]
    ):
        # alt=json wraps even an error in a one-element array.
        error = status_error(body[0], wire)
        error.raw = body
        return error
    return None


def status_body(error: ProviderError, wire: str) -> Any:
    """The error body `wire` sends; the recorded body itself when the error came from that wire."""
    if error.wire == wire and error.raw is not None:
        return error.raw
    return {
        "error": {
            "code": error.status or 500,
            "message": error.message,
            "status": error.code or "UNKNOWN",
        }
    }
