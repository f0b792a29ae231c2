# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Responses' known event shapes (see `streams/shapes.py`): an argument delta of an open call.

A call's deltas are written alike but for their sequence number, one more each time, and their string: once a
delta in OpenAI's key order (the number first) is taken, the next one's text up to its string's opening quote is
known, and a read that begins with it is that delta up to there (one comparison stands for the pattern, the
number's int() and the check of its predecessor). Its string is read by `from_json` itself, up to the end the
stream's deltas have (`}` and the blank line, or an obfuscation pad read by a pattern).
"""

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
# What follows a delta's string: nothing but the object's end, or an obfuscation pad; the string, quotes and all,
# is the group, up to the first quote the pattern can go on after (the parser then says whether it is one string).
_END = b'"}\n\n'
_PADDED_REST = re.compile(rb'("(?s:.)*?"),"obfuscation":"' + ASCII + rb'"\}\n\n')


def responses(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of a Responses stream's argument deltas for an open call."""
    start = _RESPONSES_START
    at = len(start)
    first_match = _RESPONSES_NUMBER_FIRST.fullmatch
    last_match = _RESPONSES_NUMBER_LAST.fullmatch
    padded_match = _PADDED_REST.fullmatch
    items = state.items
    sequence = state.sequence
    indexes: dict[bytes, int] = {}
    # The next delta of the call the last one taken was for: its text up to its string's opening quote (None
    # until a delta in OpenAI's order is taken), that text's length, its sequence number, the text before and
    # after the number, its output index, its item id as sent, and whether an obfuscation pad follows the string.
    ahead: bytes | None = None
    width = 0
    expected = 0
    head = middle = named = b""
    key = 0
    padded = False

    def take(chunk: bytes) -> object:
        nonlocal ahead, width, expected
        if chunk[:width] != ahead:
            return general(chunk)
        if padded:
            rest = padded_match(chunk, width - 1)
            if rest is None:
                return general(chunk)
            text = rest[1]
        elif chunk[-4:] == _END:
            text = chunk[width - 1 : -3]
        else:
            return general(chunk)
        number = expected
        if number in sequence:
            # A repeat: the generic path judges it (its predecessor is the delta taken last).
            return None
        item = items.get(key)
        if item is None:
            return None
        call = item.call
        if call is None or call.closed:
            # After its done event the generic path says what is dropped.
            return None
        try:
            # The string, quotes and all: the parser takes it only when it is one whole string.
            fragment = parse_json(text)
        except ValueError:
            return general(chunk)
        sequence[number] = named
        expected = number + 1
        ahead = b"%b%d%b" % (head, expected, middle)
        width = len(ahead)
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    def general(chunk: bytes) -> object:
        """A delta read by the patterns; one in OpenAI's order makes the next one known."""
        nonlocal ahead, width, expected, head, middle, named, key, padded
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
        index_key = indexes.get(index)
        if index_key is None:
            index_key = index_value(indexes, index)
        item = items.get(index_key)
        if item is None:
            return None
        call = item.call
        if call is None or call.closed:
            return None
        # string_value and _delta inlined, as in openai_chat's shortcut.
        try:
            fragment = (
                parse_json(b'"' + plain + escaped + b'"') if escaped else plain.decode()
            )
        except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
            return None
        sequence[number] = item_id
        if match.re is _RESPONSES_NUMBER_FIRST:
            # The string's opening quote ends the text the next delta of this call begins with.
            head, middle = chunk[: match.start(1)], chunk[match.end(1) : match.start(4)]
            named, key, expected = item_id, index_key, number + 1
            padded = match.end(5) != len(chunk) - 4
            ahead = b"%b%d%b" % (head, expected, middle)
            width = len(ahead)
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    return take
