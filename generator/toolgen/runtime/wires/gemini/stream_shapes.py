# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini's known event shapes (see `shapes`): a text chunk, and a streamed call's string argument entry.

Every Gemini chunk ends with the same head (the candidate's index, `modelVersion`, `usageMetadata`, `responseId`),
byte for byte while the usage does not change. The head's text and its values are kept from the chunk the pattern
read it in: a chunk that ends with that very text is compared with `endswith()` (one memcmp) and the pattern reads
only its part, where a pattern reads the head byte by byte (about 40 instructions a byte) and a parse builds it.
"""

from __future__ import annotations

import re
from typing import Any

from ...streams.events import (
    TextDelta,
    ToolCallDelta,
    new_object,
    parse_json,
    set_delta_arguments,
    set_delta_index,
    set_text,
)
from ...streams.shapes import ASCII, STRING, TAKEN, AnyState, Shortcut

_START = b'data: {"candidates":[{"content":{"role":"model","parts":[{'
# The chunk's one part: a text, or one string entry of the call candidate 0 streams (`willContinue` on the call).
_PART = (
    rb'(?:"text":'
    + STRING
    + rb'|"functionCall":\{"partialArgs":\[\{"jsonPath":"('
    + ASCII
    + rb')","stringValue":'
    + STRING
    + rb'(?:,"willContinue":(true|false)|)\}\],"willContinue":true\})\}\]\}'
)
# What follows the part: the candidate's index and the head Gemini repeats on every chunk.
_TAIL = (
    rb'(,"index":0\}\],"modelVersion":"(' + ASCII + rb')",'
    rb'"usageMetadata":(\{(?:"[A-Za-z]{1,64}":[0-9]{1,16},){0,16}"[A-Za-z]{1,64}":[0-9]{1,16}\}),'
    rb'"responseId":"(' + ASCII + rb')"\}(?:\r\n\r\n|\n\n))'
)
_PART_ONLY = re.compile(_PART)
_WITH_TAIL = re.compile(_PART + _TAIL)
# A set, so that one keys() comparison (a C call) asks for all three.
_HEAD = frozenset({"modelVersion", "usageMetadata", "responseId"})


def gemini(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of a Gemini stream's text chunks, once candidate 0 has text, and of a streamed call's string
    entries (partialArgs) going on with the string the entry before left open or beginning the next member beside
    it, while candidate 0 streams that call."""
    at = len(_START)
    part_only = _PART_ONLY.fullmatch
    with_tail = _WITH_TAIL.fullmatch
    head = state.head
    candidates = state.candidates
    text_parts = state.text_parts
    # The tail text read last, and its values: the head's model, usage and response id.
    tail = b"\x00"
    model: str = ""
    usage: Any = None
    response_id: str = ""
    # The head holds all three keys (which the stream never takes away again).
    headed = False

    def take(chunk: bytes) -> object:
        nonlocal tail, model, usage, response_id, headed
        if not chunk.startswith(_START):
            return None
        if chunk.endswith(tail):
            match = part_only(chunk, at, len(chunk) - len(tail))
            if match is None:
                return None
        else:
            match = with_tail(chunk, at)
            if match is None:
                return None
            # The tail's values, as the generic parse reads them (the usage by that parser itself).
            try:
                new_usage = parse_json(match[9])
            except ValueError:
                return None
            usage, tail = new_usage, chunk[match.start(7) :]
            model, response_id = match[8].decode(), match[10].decode()
        if not state.started:
            return None
        candidate = candidates.get(0)
        if (
            candidate is None
            or candidate.finished
            or not candidate.primary
            or "index" not in candidate.fields
        ):
            return None
        if not headed:
            headed = head.keys() >= _HEAD
            if not headed:
                return None
        text_plain = match[1]
        made: object
        if text_plain is not None:
            parts = candidate.parts
            if not parts:
                return None
            last = parts[-1]
            fragments, part = last[1], last[0]
            if fragments is None or part.get("thought") or "thoughtSignature" in part:
                return None
            escaped = match[2]
            try:
                text = _quoted(text_plain, escaped) if escaped else text_plain.decode()
            except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
                return None
            if not text or type(text) is not str:
                return None  # an empty part (as with a finishReason), or a string the parser rejects
            fragments.append(text)
            made = new_object(TextDelta)
            set_text(made, text)
            text_parts.append(text)
        else:
            args, call = candidate.args, candidate.call
            if args is None or call is None:
                return None
            plain, escaped = match[4], match[5]
            try:
                value = _quoted(plain, escaped) if escaped else plain.decode()
            except ValueError:
                return None
            if type(value) is not str:
                return None
            # Checked, then applied, by the call's own PartialArgs: None leaves it untouched.
            fragment = args.string_entry(
                match[3].decode(), value, match[6] == b"true", not escaped
            )
            if fragment is None:
                return None
            if fragment:
                call.parts.append(fragment)
                made = new_object(ToolCallDelta)
                set_delta_index(made, call.index)
                set_delta_arguments(made, fragment)
            else:
                made = TAKEN
        # What the generic path sets from every chunk: the candidate's role and index, and the head.
        candidate.role = "model"
        candidate.fields["index"] = 0
        head["modelVersion"] = model
        head["usageMetadata"] = usage
        head["responseId"] = response_id
        return made

    return take


def _quoted(plain: bytes, escaped: bytes) -> Any:
    """A captured string with escapes, read by the generic parser itself (its value, or its error)."""
    return parse_json(b'"' + plain + escaped + b'"')
