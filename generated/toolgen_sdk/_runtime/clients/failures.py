# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What one of HTTPModel's attempts failed with, as the ProviderError the caller meets, secrets masked."""

from __future__ import annotations

from typing import Any

from ..wires.canonical import ProviderError
from .bodies import (
    BodyTooLarge,
    BodyUnreadable,
    redirect_error,
    status_error,
    too_large,
)
from .deadline import TIMEOUTS
from .secrets import Redactor
from .urls import masked_url


class AuthFailed(Exception):
    """The credentials for an attempt could not be had: a token provider or the signer failed."""


def below_http(
    wire: str, error: Exception, httpx: Any, redactor: Redactor
) -> ProviderError:
    """What went wrong below HTTP: a timeout, a connection that failed or dropped, a request httpx refused, or
    a body past its cap or that could not be decoded."""
    if isinstance(error, BodyTooLarge):
        return too_large(wire, error)
    if isinstance(error, (httpx.TimeoutException, *TIMEOUTS)):
        kind = "timeout"
    elif isinstance(error, AuthFailed):
        kind = "auth_error"
    elif isinstance(error, BodyUnreadable):
        kind = "invalid_response"
    elif isinstance(error, httpx.TransportError):
        kind = "connection_error"
    else:
        kind = "client_error"
    message = f"{kind.replace('_', ' ')}: {type(error).__name__}: {error}"
    return redactor.error(ProviderError(wire, message, type=kind))


def answer_failure(
    wire: str, response: Any, body: bytes | Exception, redactor: Redactor
) -> ProviderError:
    """An answer that is no success: a redirect naming where it points, an error status read from its `body`, or
    one whose body could not be read (the exception: past its cap, or not decodable)."""
    status, reason = response.status_code, response.reason_phrase
    if isinstance(body, BodyTooLarge):
        failure = too_large(wire, body, status)
    elif isinstance(body, Exception):
        failure = ProviderError(
            wire, f"HTTP {status} {reason}: {body}", type="http_error", status=status
        )
    elif status < 400:
        location = response.headers.get("location")
        if location is not None:
            location = masked_url(location, redactor)
        failure = redirect_error(wire, status, reason, location)
    else:
        failure = status_error(wire, status, body, reason, response.headers)
    return redactor.error(failure)
