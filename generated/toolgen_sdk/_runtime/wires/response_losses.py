# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a response loses on its way to another wire: one note per field the target cannot carry.

The same two kinds of loss `losses` finds for requests: what the wire the response was read from kept only for
itself (its body fields, a choice's or candidate's fields, raw usage counts, a block or call field no canonical
field holds, a server tool block), and canonical content the target's own decoder does not read back from the
body it was given (a reasoning part, a signature, a usage count, the id). An error body names the fields of the
recorded body the target's error body leaves out.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from .canonical import ProviderError, Response
from .codecs import codec, encode_error, encode_response
from .helpers import UNKNOWN_FINISH
from .losses import Encoded, _differences, _message_fields, _plain
from .table import BY_NAME, canonical_name

# Keys of `extras.<wire>` that record how a body was spelled, not what it said.
_SPELLING = frozenset(
    {
        "order",
        "signed",
        "generated_ids",
        "empty_content",
        "omit_content",
        "function_call",
        "reasoning",
        "tool_plan",
    }
)
_BOOKKEEPING = frozenset({"index"})
# Body fields every body of a wire spells alike (`"object": "chat.completion"`, `"type": "message"`).
_CONSTANT = frozenset({"object", "type", "role"})
# Wires that send only the reasoning they issued themselves: a signature does not cross providers.
_SIGNED_ONLY = frozenset(
    {
        "anthropic",
        "gemini",
        "openai-responses",
        "bedrock-converse",
        "google-interactions",
    }
)


def encode_response_noted(response: Response, wire: str) -> Encoded:
    """`response` as a response body of `wire`, with a note for every field the wire has no place for."""
    name = canonical_name(wire)
    body = encode_response(response, name)
    return Encoded(name, body, response_losses(response, name, body))


def encode_error_noted(error: ProviderError, wire: str) -> Encoded:
    """`error` as the error body of `wire`, with a note for every field of the recorded body left out."""
    name = canonical_name(wire)
    body = encode_error(error, name)
    notes: tuple[str, ...] = ()
    if error.raw is not None and canonical_name(error.wire or name) != name:
        sent = [value for _, value in _leaves(body, "")]
        notes = tuple(
            f"{pointer}: {name} has no place for this {error.wire} error field; dropped"
            for pointer, value in _leaves(error.raw, "")
            if value not in (None, "") and value not in sent
        )
    return Encoded(name, body if isinstance(body, dict) else {"body": body}, notes)


def response_losses(
    response: Response, wire: str, body: dict[str, Any]
) -> tuple[str, ...]:
    """The notes for `response` encoded to `wire` as `body` (see the module docstring)."""
    target = canonical_name(wire)
    notes: list[str] = []
    for source in response.extras:
        if source in BY_NAME and canonical_name(source) != target:
            notes.extend(_kept_fields(response, source, target))
    try:
        again = codec(target).decode_response(body)
    except ValueError as error:
        return (*notes, f"/: {target} cannot read back the body it was given ({error})")
    if isinstance(again, ProviderError):
        return (
            *notes,
            f"/: {target} reads the body back as an error ({again.message})",
        )
    sent, back = _comparable(response.message), _comparable(again.message)
    notes.extend(
        _reasoning_said(note, sent, target)
        for note in _differences(sent, back, "/message", target)
    )
    wanted, got = response.finish or {}, again.finish or {}
    if wanted.get("reason") != got.get("reason"):
        notes.append(
            f"/finish/reason: {target} cannot state {wanted.get('reason')!r}; it reads back {got.get('reason')!r}"
        )
    notes.extend(_unknown_finish(response, again, target))
    notes.extend(
        _differences(response.usage or {}, again.usage or {}, "/usage", target)
    )
    for name in ("model", "id"):
        if getattr(response, name) is not None and getattr(again, name) != getattr(
            response, name
        ):
            notes.append(f"/{name}: {target} has no place for it; dropped")
    return tuple(dict.fromkeys(notes))


def _unknown_finish(response: Response, again: Response, target: str) -> Iterator[str]:
    """A finish value the source's table did not know (its decode note) that the target does not send back: the
    target writes its own word for what the value was read as, a guess."""
    reason = (response.finish or {}).get("reason")
    if reason is None:
        return  # no finish was read: the value stays in the body's fields, noted with them
    back = again.extras.get("notes") or ()
    for note in response.extras.get("notes") or ():
        if (
            isinstance(note, dict)
            and note.get("type") == UNKNOWN_FINISH
            and note not in back
        ):
            raw = note.get("raw")
            said = (
                "no finish value came"
                if raw is None
                else f"{raw!r} is a finish value toolgen does not know"
            )
            yield (
                f"/finish: {said} (read as {reason!r}); {target} sends its own word for {reason!r} instead"
            )


def _comparable(message: Mapping[str, Any]) -> Any:
    """`_plain(message)` with call arguments as the JSON value they spell: a wire that writes arguments as an
    object gives them back compact, and that is the same call."""
    plain = _plain(message)
    calls = plain.get("tool_calls") if isinstance(plain, dict) else None
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            # Text that is not JSON (or nests past the recursion limit) is compared as it is.
            with contextlib.suppress(ValueError, RecursionError):
                function["arguments"] = json.loads(function["arguments"])
    return plain


def _reasoning_said(note: str, message: Any, target: str) -> str:
    """A dropped reasoning part's note, saying why when the target has reasoning of its own."""
    pointer = note.split(":", 1)[0]
    head, _, index = pointer.rpartition("/")
    parts = message.get("content") if isinstance(message, dict) else None
    if (
        head != "/message/content"
        or not index.isdigit()
        or not isinstance(parts, list)
        or target not in _SIGNED_ONLY
    ):
        return note
    part = parts[int(index)] if int(index) < len(parts) else None
    if not (
        isinstance(part, dict)
        and part.get("type") == "reasoning"
        and note.endswith("dropped")
    ):
        return note
    return f"{pointer}: {target} carries only reasoning it issued itself (a signature does not cross providers); dropped"


def _kept_fields(response: Response, source: str, target: str) -> Iterator[str]:
    kept = response.extras.get(source)
    if isinstance(kept, dict):
        for group, value in kept.items():
            if group in _SPELLING:
                continue
            if group == "usage":
                yield from _usage_fields(value, response.usage or {}, source, target)
            elif isinstance(value, dict):
                prefix = "" if group == "fields" else f"{group}."
                for key, item in value.items():
                    constant = (
                        group == "fields" and key in _CONSTANT and isinstance(item, str)
                    )
                    if key not in _BOOKKEEPING and item is not None and not constant:
                        yield f"{prefix}{key}: {target} has no place for this {source} field; dropped"
    yield from _message_fields(response.message, "/message", source, target)
    extras = response.message.get("extras")
    blocks = extras.get(source, {}).get("blocks") if isinstance(extras, dict) else None
    yield from _block_fields(blocks if isinstance(blocks, list) else [], source, target)


def _usage_fields(
    raw: Any, usage: Mapping[str, Any], source: str, target: str
) -> Iterator[str]:
    """Raw usage counts the canonical usage does not hold (DeepSeek's cache misses, Gemini's per-modality
    counts): a count is carried when its value is one of the canonical counts."""
    carried = {value for value in usage.values() if isinstance(value, int)}
    for pointer, value in _leaves(raw, "usage"):
        where = pointer.replace("/", ".")
        if isinstance(value, int) and not isinstance(value, bool):
            if value and value not in carried:
                yield f"{where}: {target} has no place for this {source} usage count; dropped"
        elif value is not None:
            yield f"{where}: {target} has no place for this {source} usage field; dropped"


def _block_fields(blocks: list[Any], source: str, target: str) -> Iterator[str]:
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        keep = block.get("keep")
        if isinstance(keep, dict):
            what = keep.get("type")
            yield f"/message/blocks/{i}: {target} has no place for this {source} {what} block; dropped"
        for role in ("call", "part"):
            entry = block.get(role)
            if not isinstance(entry, dict):
                continue
            raw = entry.get("raw")
            if isinstance(raw, dict):
                yield f"/message/blocks/{i}: {target} has no place for this {source} {raw.get('type')} item; dropped"
            rest = entry.get("rest")
            for key, value in rest.items() if isinstance(rest, dict) else ():
                if key not in _BOOKKEEPING and value not in (None, [], {}):
                    yield f"/message/blocks/{i}/{key}: {target} has no place for this {source} field; dropped"


def _leaves(value: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{pointer}/{i}")
    else:
        yield pointer, value
