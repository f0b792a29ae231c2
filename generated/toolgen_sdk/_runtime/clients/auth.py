# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How HTTPModel authenticates each attempt: a key in a header, a bearer token given or fetched, or a signature.

A key is fixed for the client's life. A token may be a zero-argument callable (an Entra ID token provider, a
google-auth credential): it is asked again before every attempt, so a refreshed token is used as soon as it exists.
A signature (SigV4, in sigv4.py) covers the very bytes of each attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..extras import optional_module

# Where the scopes of Vertex AI's OAuth tokens are asked for.
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


class Auth(Protocol):
    """Credentials that are worked out per attempt, from the request about to be sent."""

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """The headers that authenticate this request."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """Every credential value handed out so far, for the client to mask wherever it might show."""
        ...


def checked(value: str, what: str) -> str:
    """The credential without surrounding space; ValueError (not naming it) when it could not travel in a header."""
    value = value.strip()
    if not value:
        raise ValueError(f"the {what} is empty")
    if not value.isascii() or not value.isprintable():
        # httpx would refuse the header and quote it, secret included, in its error message.
        raise ValueError(
            f"the {what} holds a control or non-ASCII character; check how it was read"
        )
    return value


def key_headers(kind: str, api_key: str | None) -> dict[str, str]:
    """The header a route's `auth` puts a key in: `Authorization: Bearer <key>`, or the named header."""
    if not api_key:
        return {}
    api_key = checked(api_key, "API key")
    if kind in ("bearer", "sigv4"):
        # Bedrock API keys are bearer tokens; SigV4 signs only when no key is given.
        return {"authorization": f"Bearer {api_key}"}
    return {kind: api_key}


class BearerToken:
    """`Authorization: Bearer <token>` from a token, or from a zero-argument callable asked before each attempt."""

    def __init__(self, token: str | Callable[[], str]) -> None:
        self._source = token
        self._seen: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return "BearerToken(***)"

    def token(self) -> str:
        value = self._source() if callable(self._source) else self._source
        if not isinstance(value, str):
            raise TypeError(
                f"the token provider gave a {type(value).__name__}, not a string"
            )
        value = checked(value, "bearer token")
        if value not in self._seen:
            self._seen = (*self._seen, value)
        return value

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token()}"}

    def secrets(self) -> tuple[str, ...]:
        return self._seen


def google_token(scopes: tuple[str, ...] = (CLOUD_PLATFORM,)) -> Callable[[], str]:
    """A token provider from google-auth's default credentials (ADC), refreshed whenever it has expired."""
    needs = "Vertex AI's default credentials (token= needs none)"
    google_auth = optional_module("google.auth", "vertex", needs)
    transport = optional_module("google.auth.transport.requests", "vertex", needs)
    credentials: Any
    credentials, _ = google_auth.default(scopes=list(scopes))

    def token() -> str:
        if not credentials.valid:
            credentials.refresh(transport.Request())
        return str(credentials.token)

    return token
