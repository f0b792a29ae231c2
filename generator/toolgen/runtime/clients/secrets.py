# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Redactor: keeps configured API keys out of every error message, raw body and stream event a client gives out.

A server may echo the key it was sent, whole, cut short ("sk-proj-abcd****wxyz") or URL-encoded; any run of
key characters that shares a long enough piece with a key is replaced by `***`.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from ..streams.events import Event, Finish, MessageEnd, StreamError
from ..wires.base import ProviderError

# Headers that carry credentials, compared in lower case.
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"}
)

# Words before the credential in an Authorization value: not secret themselves.
_SCHEMES = frozenset({"bearer", "basic", "token", "key"})

# A piece of a key this long found in a text marks the text as holding the key; shorter keys must appear whole,
# as a token of their own: a key "k" or "test" masked inside words would mangle every message ("too*** 2 s").
_PIECE = 8

# The characters a key, its URL-encoded form or a masked echo of it is made of; a match is widened to all of them.
_KEYISH = re.compile(r"[A-Za-z0-9_\-.~+/%*]")

MASK = "***"

T = TypeVar("T")


class Redactor:
    """The secrets one client was configured with, and the one way of removing them from what it gives out."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = tuple(
            dict.fromkeys(s.strip() for s in secrets if s and s.strip())
        )
        forms: set[str] = set()
        for secret in self._secrets:
            forms.update(
                (
                    secret,
                    urllib.parse.quote(secret, safe=""),
                    urllib.parse.quote_plus(secret, safe=""),
                )
            )
        self._forms = tuple(sorted(forms, key=len, reverse=True))
        short = [form for form in self._forms if len(form) <= _PIECE]
        self._short = (
            re.compile(
                f"(?<!{_KEYISH.pattern})(?:{'|'.join(map(re.escape, short))})(?!{_KEYISH.pattern})"
            )
            if short
            else None
        )
        pieces = sorted(
            {
                form[start : start + _PIECE]
                for form in self._forms
                if len(form) > _PIECE
                for start in range(len(form) - _PIECE + 1)
            }
        )
        # A lookahead finds every piece, overlapping ones too, in one pass of the regex engine.
        self._pieces = (
            re.compile("(?=(" + "|".join(map(re.escape, pieces)) + "))")
            if pieces
            else None
        )

    @classmethod
    def of(cls, api_key: str | None, headers: Mapping[str, str]) -> Redactor:
        """The secrets in an API key and in the credential headers among `headers`, whatever their case."""
        secrets = [api_key] if api_key else []
        for name, value in headers.items():
            if name.lower() in SECRET_HEADERS and isinstance(value, str):
                # "Bearer <key>": the key alone, so that the text around an echo is kept.
                secrets.extend(w for w in value.split() if w.lower() not in _SCHEMES)
        return cls(secrets)

    def plus(self, secrets: Iterable[str]) -> Redactor:
        """This redactor, or a new one that also masks `secrets` when some are new (a token fetched later)."""
        new = [
            s.strip() for s in secrets if s.strip() and s.strip() not in self._secrets
        ]
        return Redactor((*self._secrets, *new)) if new else self

    def __bool__(self) -> bool:
        return bool(self._forms)

    def __repr__(self) -> str:
        return f"Redactor({len(self._forms)} secret forms)"

    def text(self, text: str) -> str:
        """The text with every key, piece of a key or encoded key replaced by the mask."""
        if not self._forms:
            return text
        if self._short is not None:
            text = self._short.sub(MASK, text)
        starts = (
            [m.start() for m in self._pieces.finditer(text)] if self._pieces else []
        )
        if not starts:
            return text
        marked = [False] * len(text)
        for start in starts:
            marked[start : start + _PIECE] = [True] * _PIECE
        # Widen each mark over its run of key characters, so that no visible tail of a masked echo is left.
        for index in range(1, len(text)):
            if not marked[index] and marked[index - 1] and _KEYISH.match(text[index]):
                marked[index] = True
        for index in range(len(text) - 2, -1, -1):
            if not marked[index] and marked[index + 1] and _KEYISH.match(text[index]):
                marked[index] = True
        out: list[str] = []
        for index, char in enumerate(text):
            if not marked[index]:
                out.append(char)
            elif index == 0 or not marked[index - 1]:
                out.append(MASK)
        return "".join(out)

    def value(self, value: T) -> T:
        """A copy of a JSON-like value (a raw body) with every string in it, keys included, redacted."""
        result: Any = value
        if not self._forms:
            return value
        if isinstance(value, str):
            result = self.text(value)
        elif isinstance(value, (bytes, bytearray)):
            result = self.text(bytes(value).decode("utf-8", "replace")).encode()
        elif isinstance(value, dict):
            result = {self.value(k): self.value(v) for k, v in value.items()}
        elif isinstance(value, (list, tuple)):
            result = type(value)(self.value(item) for item in value)
        elif isinstance(value, BaseException):
            # An exception kept as the raw of a dropped stream: its text, when that held a secret.
            text = f"{type(value).__name__}: {value}"
            result = value if self.text(text) == text else self.text(text)
        return result  # type: ignore[no-any-return]

    def error(self, error: ProviderError) -> ProviderError:
        """The same ProviderError, its message, type, code, raw body and arguments redacted in place."""
        if not self._forms:
            return error
        error.message = self.text(error.message)
        error.args = (error.message,)
        error.type = None if error.type is None else self.text(error.type)
        error.code = None if error.code is None else self.text(error.code)
        error.raw = self.value(error.raw)
        return error

    def event(self, event: Event) -> Event:
        """A stream event with the secrets taken out of the error or raw reason it carries; others as they are."""
        if not self._forms:
            return event
        if isinstance(event, StreamError):
            return dataclasses.replace(
                event,
                message=self.text(event.message),
                code=None if event.code is None else self.text(event.code),
                type=None if event.type is None else self.text(event.type),
                raw=self.value(event.raw),
            )
        if isinstance(event, Finish) and event.raw is not None:
            # An error's code or body may come back as the raw reason the stream stopped.
            return dataclasses.replace(event, raw=self.value(event.raw))
        if isinstance(event, MessageEnd):
            if isinstance(event.response, ProviderError):
                return dataclasses.replace(event, response=self.error(event.response))
            # The final message keeps the stream's errors (a bad frame quoted) and the provider's own fields.
            extras = self.value(event.response.extras)
            response = dataclasses.replace(event.response, extras=extras)
            return dataclasses.replace(event, response=response)
        return event
