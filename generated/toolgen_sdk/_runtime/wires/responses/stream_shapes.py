# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Responses' known event shapes (see `streams/shapes.py`): an argument delta of an open call."""

from __future__ import annotations

import re
from typing import Any

from ...streams.events import (
    ToolCallDelta,
    new_object,
    parse_json,
    set_delta_arguments,
    set_delta_index,
)
from ...streams.shapes import (
    ASCII,
    INDEX,
    STRING,
    TAKEN,
    AnyState,
    Shortcut,
    index_value,
)

# OpenAI Responses: an argument delta of an open call, with its `event:` line, its keys in OpenAI's order (the
# sequence number first) or in the order of compatibles that write it last (OpenAI adds an obfuscation pad, which
# the state does not read).
_RESPONSES_START = (
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta",'
)
_SEQUENCE = rb"(0|[1-9][0-9]{0,17})"
_RESPONSES_DELTA = (
    rb'"item_id":"('
    + ASCII
    + rb')","output_index":'
    + INDEX
    + rb',"delta":'
    + STRING
    + rb'(?:,"obfuscation":"'
    + ASCII
    + rb'"|)'
)
_RESPONSES_NUMBER_FIRST = re.compile(
    rb'"sequence_number":' + _SEQUENCE + rb"," + _RESPONSES_DELTA + rb"\}\n\n"
)
_RESPONSES_NUMBER_LAST = re.compile(
    _RESPONSES_DELTA + rb',"sequence_number":' + _SEQUENCE + rb"\}\n\n"
)


def responses(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of a Responses stream's argument deltas for an open call."""
    start = _RESPONSES_START
    at = len(start)
    first_match = _RESPONSES_NUMBER_FIRST.fullmatch
    last_match = _RESPONSES_NUMBER_LAST.fullmatch
    items = state.items
    sequence = state.sequence
    indexes: dict[bytes, int] = {}

    def take(chunk: bytes) -> object:
        if not chunk.startswith(start):
            return None
        match = first_match(chunk, at)
        if match is not None:
            number_text, item_id, index, plain, escaped = match.groups()
        else:
            match = last_match(chunk, at)
            if match is None:
                return None
            item_id, index, plain, escaped, number_text = match.groups()
        number = int(number_text)
        if number in sequence or number - 1 not in sequence:
            # A repeat, or an event out of order: the generic path judges it.
            return None
        key = indexes.get(index)
        if key is None:
            key = index_value(indexes, index)
        item = items.get(key)
        if item is None:
            return None
        call = item.call
        if call is None:
            return None
        # string_value and _delta inlined, as in openai_chat's shortcut.
        try:
            fragment = (
                parse_json(b'"' + plain + escaped + b'"') if escaped else plain.decode()
            )
        except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
            return None
        sequence[number] = item_id
        if not fragment or call.closed:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    return take
