# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI chat's known event shapes (see `streams/shapes.py`): an argument fragment or a text delta of choice 0."""

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
    ASCII,
    INDEX,
    STRING,
    TAKEN,
    AnyState,
    Shortcut,
    index_value,
    new_mark,
    string_value,
)

# OpenAI chat: an argument fragment or a text delta of choice 0, as OpenAI sends them (head keys in OpenAI's
# order; the optional ones as other compatibles leave them out). The state's inline path reads nothing at the
# top level but the choices, usage (null here) and the obfuscation pad, which is kept as the generic path keeps
# it. The head is the same text on every chunk of a stream: once a whole chunk matched, its head is compared
# with startswith() (one memcmp, where the pattern reads byte by byte) and the pattern reads the rest.
_CHAT_HEAD = re.compile(
    rb'data: \{"id":"' + ASCII + rb'","object":"chat\.completion\.chunk",'
    rb'"created":[0-9]{1,12},"model":"' + ASCII + rb'",'
    rb'(?:"service_tier":"' + ASCII + rb'",)?'
    rb'(?:"system_fingerprint":"' + ASCII + rb'",)?'
    rb'(?:"usage":null,)?"choices":\[\{"index":0,"delta":\{'
)
_CHAT_REST = re.compile(
    rb'(?:"tool_calls":\[\{"index":'
    + INDEX
    + rb',"function":\{"arguments":'
    + STRING
    + rb'\}\}\]|"content":'
    + STRING
    + rb")"
    rb'\},"logprobs":null,"finish_reason":null\}\]'
    rb'(?:,"obfuscation":"([ !#-\[\]-~]{0,64})"|)\}\n\n'
)


def openai_chat(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of an OpenAI chat stream's argument and text chunks."""
    head_match = _CHAT_HEAD.match
    rest_match = _CHAT_REST.fullmatch
    marks = state.marks
    text_parts = state.text_parts
    # The head text of the last chunk taken; no read starts with a NUL byte.
    head = b"\x00"
    indexes: dict[bytes, int] = {}

    def take(chunk: bytes) -> object:
        nonlocal head
        if chunk.startswith(head):
            match = rest_match(chunk, len(head))
            if match is None:
                return None
        else:
            found = head_match(chunk)
            if found is None:
                return None
            match = rest_match(chunk, found.end())
            if match is None:
                return None
            head = chunk[: found.end()]
        slot, plain, escaped, text_plain, text_escaped, mark = match.groups()
        choice = state.primary
        if choice is None or choice.index != 0 or choice.finish is not None:
            return None
        # string_value, new_mark and _delta inlined: this runs once per chunk of the usual stream, and a Python call
        # costs about a tenth of the chunk.
        if slot is not None:
            number = indexes.get(slot)
            if number is None:
                number = index_value(indexes, slot)
            call = choice.slots.get(number)
            if call is None or call.closed:
                return None
            try:
                fragment = (
                    parse_json(b'"' + plain + escaped + b'"')
                    if escaped
                    else plain.decode()
                )
            except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
                return None
            if mark is not None:
                key = mark.decode()
                if key in marks:
                    return None
                marks[key] = chunk[6:-2]
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        if choice.parts is not None or not state.started:
            return None
        text = string_value(text_plain, text_escaped)
        if text is None or not new_mark(marks, mark, chunk):
            return None
        choice.saw_content = True
        if not text:
            return TAKEN
        choice.content.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take
