# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Redactor: keeps configured API keys out of everything a client gives out: answers, events, errors, raw bodies.

A server may echo the key it was sent, whole, cut short ("sk-proj-abcd****wxyz"), URL-encoded, JSON-escaped,
base64-encoded or as hex (secret_forms.py); any run of key characters that shares a long enough piece with a
form of a key is replaced by `***`. Tool call arguments stay valid JSON. A stream's deltas go through
stream_mask.py, which holds back what may be the start of a key split across two deltas.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from ..streams.events import (
    Event,
    Finish,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    dumps_compact,
)
from ..wires.canonical import ProviderError, Response
from .secret_forms import PIECE, Pieces, encoded_forms, plain_forms

# Headers that carry credentials, compared in lower case.
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"}
)

# A request header named with one of these words (any case, anywhere in the name: X-Gateway-Key, X-Auth-Token,
# Cookie) carries a credential, whatever the header: its value is masked like the known ones'.
_CREDENTIAL_NAME = re.compile(
    "(?i)key|token|secret|auth|passw|cookie|session|credential|signature"
)

# Words before the credential in an Authorization value: not secret themselves.
_SCHEMES = frozenset({"bearer", "basic", "token", "key"})

# The characters a key, its URL-encoded form or a masked echo of it is made of; a match is widened to all of them.
_KEYISH_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/%*"
)
_KEYISH = "A-Za-z0-9_\\-.~+/%*"
_KEYISH_RUN = re.compile(f"[{_KEYISH}]*")

MASK = "***"

_SCALARS = frozenset({int, float, bool, type(None)})

# Strings up to this long that held no secret are remembered, this many at most.
_KNOWN_LENGTH = 128
_KNOWN_COUNT = 4096

T = TypeVar("T")

Span = tuple[int, int]


class Redactor:
    """The secrets one client was configured with, and the one way of removing them from what it gives out."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Short strings found to hold no secret (bounded; emptied when full).
        self._clean: set[str] = set()
        self._secrets = tuple(
            dict.fromkeys(s.strip() for s in secrets if s and s.strip())
        )
        short: set[str] = set()
        long: dict[str, int] = {}
        for secret in self._secrets:
            for form in plain_forms(secret):
                if len(form) <= PIECE:
                    short.add(form)
                else:
                    long[form] = PIECE
            if len(secret) > PIECE:
                for form, size in encoded_forms(secret).items():
                    long.setdefault(form, size)
        self._forms = (*sorted(short), *sorted(long))
        self._short = (
            re.compile(
                f"(?<![{_KEYISH}])(?:{'|'.join(map(re.escape, sorted(short, key=len, reverse=True)))})"
                f"(?![{_KEYISH}])"
            )
            if short
            else None
        )
        self._pieces = Pieces(long) if long else None
        # Whether some key is short enough to be masked only where it stands alone.
        self.short = bool(short)
        pieces = self._pieces
        # The shortest text that can hold anything to mask.
        self.shortest = min(
            [len(form) for form in short] + ([pieces.window] if pieces else []),
            default=0,
        )
        # What a text must hold for anything in it to be masked: one search, most often the only work done.
        self.suspect = re.compile(
            "|".join(
                [
                    *([pieces.runs.pattern] if pieces else []),
                    *(re.escape(form) for form in sorted(short, key=len, reverse=True)),
                ]
            )
            or "(?!)"
        )
        self._short_forms = tuple(short)
        self.chars = "".join(
            sorted({*(pieces.chars if pieces else ""), *"".join(short)})
        )
        # What a key or a masked stretch around it may be made of: a stream's channel keeps a last such character.
        self.around = frozenset((*self.chars, *_KEYISH_CHARS))
        self.reach = max(
            (pieces.longest if pieces else 0), *(len(f) + 1 for f in short), 1
        )

    @functools.cached_property
    def prefixes(self) -> frozenset[str]:
        """What a stream must hold back at the end of a delta: the start of a piece, or of a short key whose end
        (and so whether it stands alone) only the next delta shows. Made when a stream first needs it."""
        pieces = self._pieces
        return frozenset(
            (
                *(pieces.prefixes() if pieces else ()),
                *(f[:e] for f in self._short_forms for e in range(1, len(f) + 1)),
            )
        )

    @classmethod
    def of(cls, api_key: str | None, headers: Mapping[str, str]) -> Redactor:
        """The secrets in an API key and in the credential headers among `headers`, whatever their case: the known
        ones, and any other header whose name says it carries one (credential_header)."""
        secrets = [api_key] if api_key else []
        for name, value in headers.items():
            if not isinstance(value, str):
                continue
            # "Bearer <key>": the key alone, so that the text around an echo is kept.
            words = [w for w in value.split() if w.lower() not in _SCHEMES]
            if name.lower() in SECRET_HEADERS:
                secrets.extend(words)
            elif credential_header(name):
                # A cookie's "name=value;": its value too. Only values long enough to be a credential are masked in
                # what the server sends back: a flag ("X-Use-Session: 1") masked wherever it stands alone would
                # change answers; the recording masks the header whole, whatever its length.
                values = [
                    v.strip(";,") for w in words for v in (w, w.partition("=")[2])
                ]
                secrets.extend(v for v in values if len(v) >= PIECE)
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

    # -- where the secrets are --

    def spans(self, text: str, carry: int | None = None) -> list[Span]:
        """The stretches of `text` to mask, in order and apart: every piece of a form, widened over the key
        characters around it, never cutting a JSON escape in two. `carry` is an index where a masked stretch
        comes in from before the text (a stream's previous delta): the key characters from there are masked too.
        """
        found = self._pieces.found(text) if self._pieces is not None else []
        if self._short is not None:
            found += [match.span() for match in self._short.finditer(text)]
        if carry is not None:
            found.append((carry, _run_end(text, carry)))
        if not found:
            return []
        found.sort()
        spans: list[list[int]] = []
        for start, end in found:
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            elif end > start:
                spans.append([start, end])
        out: list[Span] = []
        for start, end in spans:
            # Widened over its run of key characters, so that no visible tail of a masked echo is left.
            while start > 0 and text[start - 1] in _KEYISH_CHARS:
                start -= 1
            end = _run_end(text, end)
            if "\\" in text:
                start, end = _whole_escapes(text, start, end)
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        return out

    def text(self, text: str) -> str:
        """The text with every key, piece of a key or encoded key replaced by the mask."""
        if not self._forms or len(text) < self.shortest:
            return text
        known = len(text) <= _KNOWN_LENGTH
        if known and text in self._clean:
            return text
        spans = self.spans(text) if self.suspect.search(text) is not None else None
        if spans:
            return render(text, spans, 0, len(text), False)
        if known:
            # Field names and ids come back in every answer: each is looked at once.
            if len(self._clean) >= _KNOWN_COUNT:
                self._clean.clear()
            self._clean.add(text)
        return text

    def arguments(self, text: str) -> str:
        """Tool call arguments (JSON text) redacted and still valid JSON when they were; an echo hidden behind
        JSON escapes (`\\u0073k-...`) is found in the parsed value."""
        masked = self.text(text)
        if masked == text and "\\" not in text:
            return text
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return masked
        clean = self._value(parsed)
        if masked != text:
            try:
                json.loads(masked)
            except (ValueError, RecursionError):
                return dumps_compact(clean)
            return masked
        return text if clean is parsed else dumps_compact(clean)

    # -- what a client gives out --

    def value(self, value: T) -> T:
        """A JSON-like value (a raw body) with every string in it, keys included, redacted: the very same
        object when nothing in it changed, else a copy."""
        if not self._forms:
            return value
        return self._value(value)  # type: ignore[no-any-return]

    def _value(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return self.text(value)
        if kind in _SCALARS:
            return value
        if kind is dict:
            out: dict[Any, Any] | None = None
            for index, (key, item) in enumerate(value.items()):
                clean_key = self.text(key) if type(key) is str else key
                clean = (
                    self.arguments(item)
                    if key == "arguments" and type(item) is str
                    else self._value(item)
                )
                if out is None and (clean_key is not key or clean is not item):
                    # The first change: the copy starts with the entries before it, as they are.
                    out = dict(itertools.islice(value.items(), index))
                if out is not None:
                    out[clean_key] = clean
            return value if out is None else out
        if kind is list or kind is tuple:
            items = [self._value(item) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if kind is list else tuple(items)
        if isinstance(value, (bytes, bytearray)):
            decoded = bytes(value).decode("utf-8", "replace")
            masked = self.text(decoded)
            return value if masked == decoded else masked.encode()
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (dict, list, tuple)):
            # A subclass (an OrderedDict, a named tuple): read as its plain kind.
            return self._value(dict(value) if isinstance(value, dict) else list(value))
        if isinstance(value, BaseException):
            # An exception kept as the raw of a dropped stream: its text, when that held a secret.
            text = f"{type(value).__name__}: {value}"
            return value if self.text(text) == text else self.text(text)
        return value

    def response(self, response: Response) -> Response:
        """The response with its message (text, reasoning, tool calls), finish, usage, ids and extras redacted."""
        if not self._forms:
            return response
        fields = {
            "message": response.message,
            "finish": response.finish,
            "usage": response.usage,
            "model": response.model,
            "id": response.id,
            "extras": response.extras,
        }
        clean = {name: self._value(value) for name, value in fields.items()}
        changed = {k: v for k, v in clean.items() if v is not fields[k]}
        return dataclasses.replace(response, **changed) if changed else response

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
        """A stream event with the secrets taken out of every text it carries; the same event when it held none.

        Deltas are masked one by one here: stream_mask.py also finds a key split across two of them.
        """
        if not self._forms:
            return event
        kind = type(event)
        if kind is TextDelta or kind is ReasoningDelta:
            text = self.text(event.text)  # type: ignore[union-attr]
            return event if text == event.text else kind(text)  # type: ignore[union-attr]
        if kind is ToolCallDelta:
            assert isinstance(event, ToolCallDelta)
            text = self.text(event.arguments)
            return (
                event if text == event.arguments else ToolCallDelta(event.index, text)
            )
        if kind is MessageEnd:
            assert isinstance(event, MessageEnd)
            if isinstance(event.response, ProviderError):
                return dataclasses.replace(event, response=self.error(event.response))
            response = self.response(event.response)
            return (
                event
                if response is event.response
                else dataclasses.replace(event, response=response)
            )
        if kind is ToolCallEnd:
            assert isinstance(event, ToolCallEnd)
            changes = self._changes(event, ("id", "name", "parsed", "error"))
            if event.arguments is not None:
                arguments = self.arguments(event.arguments)
                if arguments is not event.arguments:
                    changes["arguments"] = arguments
            return dataclasses.replace(event, **changes) if changes else event
        names: tuple[str, ...]
        if kind is StreamError:
            names = ("message", "code", "type", "raw")
        elif kind is Finish:
            names = ("reason", "raw")
        elif kind is MessageStart or kind is ToolCallStart:
            names = ("id", "model") if kind is MessageStart else ("id", "name")
        elif kind is Usage:
            names = ("usage",)
        else:
            return event
        changes = self._changes(event, names)
        return dataclasses.replace(event, **changes) if changes else event

    def _changes(self, event: Any, names: tuple[str, ...]) -> dict[str, Any]:
        out = {}
        for name in names:
            value = getattr(event, name)
            clean = self._value(value)
            if clean is not value:
                out[name] = clean
        return out


def credential_header(name: str) -> bool:
    """Whether a request header carries a credential: a known one, or one whose name says so (X-Gateway-Key,
    X-Auth-Token, Cookie, X-Session-Id), in any case."""
    return name.lower() in SECRET_HEADERS or _CREDENTIAL_NAME.search(name) is not None


def render(text: str, spans: list[Span], start: int, end: int, carry: bool) -> str:
    """text[start:end] with each of `spans` (clipped to it) replaced by one mask; `carry` when the text before
    `start` ended masked, so that a stretch going on from there adds no second mask."""
    out: list[str] = []
    at = start
    for span_start, span_end in spans:
        if span_end <= start or span_start >= end:
            continue
        span_start, span_end = max(span_start, start), min(span_end, end)
        out.append(text[at:span_start])
        if not (carry and span_start == start):
            out.append(MASK)
        at = span_end
    out.append(text[at:end])
    return "".join(out)


def _run_end(text: str, at: int) -> int:
    """Where the run of key characters from `at` ends."""
    match = _KEYISH_RUN.match(text, at)
    return at if match is None else match.end()


def _escape_at(text: str, index: int) -> int:
    """The length of the JSON escape that starts at `index` (a backslash not itself escaped), else 0."""
    if text[index] != "\\":
        return 0
    before = index
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    if (index - before) % 2:
        return 0
    return 6 if text[index + 1 : index + 2] == "u" else 2


def _whole_escapes(text: str, start: int, end: int) -> Span:
    """The span grown so that no JSON escape (`\\"`, `\\u00e9`) is cut in two by either of its ends: masking half
    of one would leave arguments that no longer parse."""
    for index in range(max(0, start - 5), start):
        width = _escape_at(text, index)
        if width and index + width > start:
            start = index
            break
    reach = end
    for index in range(max(start, end - 5), end):
        width = _escape_at(text, index)
        if width and index + width > reach:
            reach = min(len(text), index + width)
    return start, reach
