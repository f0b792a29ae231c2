# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Anthropic's known event shapes (see `streams/shapes.py`): a text or argument delta of a content block."""

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
from ...streams.shapes import (
    INDEX,
    STRING,
    TAKEN,
    AnyState,
    Shortcut,
    string_value,
)

# Anthropic: a text or argument delta of a content block, with its `event:` line. Its text is fixed but for the
# block's index and the string: the start, the part after a one-digit index and the end are compared in place
# (startswith() and endswith(), one memcmp each), and the string, quotes and all, is read by the generic parser
# itself, which takes it only when it is one string (any quote in it escaped) and reads it as the generic path does.
# A block index of more digits is read by the pattern.
_ANTHROPIC_START = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
)
_ANTHROPIC_END = b'"}}\n\n'
_ANTHROPIC_ARGUMENTS = b',"delta":{"type":"input_json_delta","partial_json":"'
_ANTHROPIC_TEXT = b',"delta":{"type":"text_delta","text":"'
_ANTHROPIC_REST = re.compile(
    INDEX
    + rb',"delta":\{"type":"(?:input_json_delta","partial_json":'
    + STRING
    + rb'|text_delta","text":'
    + STRING
    + rb")\}\}\n\n"
)


def anthropic(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of an Anthropic stream's argument and text deltas for an open block."""
    start, end = _ANTHROPIC_START, _ANTHROPIC_END
    at = len(start)
    arguments, text_start = _ANTHROPIC_ARGUMENTS, _ANTHROPIC_TEXT
    # Where each string begins (its opening quote), after a one-digit index.
    arguments_at, text_at = at + len(arguments), at + len(text_start)
    rest_match = _ANTHROPIC_REST.fullmatch
    blocks = state.blocks
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        if not chunk.startswith(start) or not chunk.endswith(end):
            return None
        key = chunk[at] - 48
        if key < 0 or key > 9 or chunk[at + 1] != 44:  # not one digit and a comma
            return longer(chunk)
        block = blocks.get(key)
        if block is None or block.done or state.complete:
            return None
        call = block.call
        # The string's text with its quotes: what follows the delta's start, less the end's `}}` and blank line.
        if call is not None and chunk.startswith(arguments, at + 1):
            try:
                fragment = parse_json(chunk[arguments_at:-4])
            except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        # A text delta for a block of another type is the generic path's to settle (and to note).
        if (
            not state.started
            or block.kind != "text"
            or not chunk.startswith(text_start, at + 1)
        ):
            return None
        try:
            text = parse_json(chunk[text_at:-4])
        except ValueError:
            return None
        if not text:
            return TAKEN
        block.parts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    def longer(chunk: bytes) -> object:
        """The delta of a block whose index is not one digit, read by the pattern."""
        match = rest_match(chunk, at)
        if match is None or state.complete:
            return None
        index, plain, escaped, text_plain, text_escaped = match.groups()
        block = blocks.get(int(index))
        if block is None or block.done:
            return None
        if plain is not None:
            call = block.call
            fragment = string_value(plain, escaped)
            if call is None or fragment is None:
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        text = string_value(text_plain, text_escaped)
        if text is None or not state.started or block.kind != "text":
            return None
        if not text:
            return TAKEN
        block.parts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take
