# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Known event shapes: a wire's common read, matched whole by one regular expression instead of framed and parsed.

Nearly every read of a stream is one of a few events whose text never varies but for an index and a string (an
argument fragment, a text delta). For those, one compiled pattern `fullmatch`ed on the read does the framing, the
parse and most of the state's checks in one C call, and captures only what varies. A shortcut is sound: it takes
a read only when the generic path (framing, `parse_json`, the state's `feed`) would give the very same events and
state; a read of any other text (another key order, whitespace, an extra or repeated key, an escape, a non-ASCII
skipped field, CRLF where LF is matched, two events at once), or one the state would treat otherwise (a block
not open, a sequence number seen, a repeat mark seen), is left to the generic path, untouched.

A shortcut returns the one event the read makes, `TAKEN` when it took the read and makes none, or None when the
read is not its to take. The aggregator asks it only while its decoder holds no partial event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .events import (
    TextDelta,
    ToolCallDelta,
    new_object,
    parse_json,
    set_delta_arguments,
    set_delta_index,
    set_text,
)

if TYPE_CHECKING:
    from .anthropic import AnthropicState
    from .openai_chat import OpenAIChatState
    from .responses import ResponsesState
    from .state import WireState

# One read in, its event, TAKEN, or None (not this shortcut's read).
Shortcut = Callable[[bytes], object]

TAKEN = object()

# A skipped string field: printable ASCII with no quote and no backslash, so its bytes are its value and the
# generic parse cannot fail on it (no escape, no invalid UTF-8, no control character).
_ASCII = rb"[ !#-\[\]-~]*+"
# A captured string, in two groups: its text when it holds no escape; else its text with simple escapes (decoded by
# the generic parser itself, so the value is the one the generic path reads). Raw bytes above 0x7f are checked as
# UTF-8 when decoded; control characters are not matched.
_STRING = rb'"(?:([^"\\\x00-\x1f]*+)"|((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+)")'
# A JSON index: no leading zero, no sign, no exponent, and short enough that int() of it is cheap.
_INDEX = rb"(0|[1-9][0-9]{0,8})"


def _text(plain: bytes | None, escaped: bytes) -> str | None:
    """A captured JSON string's value, or None when the generic parser would reject it (it then sees the read)."""
    try:
        if plain is not None:
            return plain.decode()
        value = parse_json(b'"' + escaped + b'"')
    except (
        ValueError
    ):  # UnicodeDecodeError is one: invalid UTF-8 makes the generic parse fail too
        return None
    return value if type(value) is str else None


def _delta(index: int, fragment: str) -> ToolCallDelta:
    event: ToolCallDelta = new_object(ToolCallDelta)
    set_delta_index(event, index)
    set_delta_arguments(event, fragment)
    return event


def _text_delta(text: str) -> TextDelta:
    event: TextDelta = new_object(TextDelta)
    set_text(event, text)
    return event


# OpenAI chat: an argument fragment or a text delta of choice 0, as OpenAI sends them (head keys in OpenAI's order;
# the optional ones as other compatibles leave them out). The state's inline path reads nothing at the top level
# but the choices, usage (null here) and the obfuscation pad, which is kept as the generic path keeps it.
_CHAT = re.compile(
    rb'data: \{"id":"'
    + _ASCII
    + rb'","object":"chat\.completion\.chunk","created":[0-9]{1,12},'
    rb'"model":"' + _ASCII + rb'",(?:"service_tier":"' + _ASCII + rb'",)?'
    rb'(?:"system_fingerprint":"'
    + _ASCII
    + rb'",)?(?:"usage":null,)?"choices":\[\{"index":0,"delta":\{'
    rb'(?:"tool_calls":\[\{"index":'
    + _INDEX
    + rb',"function":\{"arguments":'
    + _STRING
    + rb"\}\}\]"
    rb'|"content":' + _STRING + rb')\},"logprobs":null,"finish_reason":null\}\]'
    rb'(?:,"obfuscation":"([ !#-\[\]-~]{0,64})")?\}\n\n'
)


def openai_chat(state: OpenAIChatState) -> Shortcut:
    """The shortcut of an OpenAI chat stream's argument and text chunks."""
    fullmatch = _CHAT.fullmatch
    marks = state.marks
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        match = fullmatch(chunk)
        if match is None:
            return None
        slot, plain, escaped, content_plain, content_escaped, mark = match.groups()
        choice = state.primary
        if choice is None or choice.index != 0 or choice.finish is not None:
            return None
        if slot is not None:
            call = choice.slots.get(int(slot))
            if call is None or call.closed:
                return None
            fragment = _text(plain, escaped)
            if fragment is None or not _new_mark(marks, mark, chunk):
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            return _delta(call.index, fragment)
        if choice.parts is not None or not state.started:
            return None
        text = _text(content_plain, content_escaped)
        if text is None or not _new_mark(marks, mark, chunk):
            return None
        choice.saw_content = True
        if not text:
            return TAKEN
        choice.content.append(text)
        text_parts.append(text)
        return _text_delta(text)

    return take


def _new_mark(marks: dict[str, Any], mark: bytes | None, chunk: bytes) -> bool:
    """Keep a chunk's obfuscation pad as the generic path keeps it; False for a pad seen before (maybe a repeat,
    which the generic path tells by comparing the payloads)."""
    if mark is None:
        return True
    key = mark.decode()
    if key in marks:
        return False
    # The chunk's JSON text, as the aggregator hands it to the state: the read less `data: ` and the blank line.
    marks[key] = chunk[6:-2]
    return True


# Anthropic: a text or argument delta of a content block, with its `event:` line.
_ANTHROPIC = re.compile(
    rb'event: content_block_delta\ndata: \{"type":"content_block_delta","index":'
    + _INDEX
    + rb","
    rb'"delta":\{"type":"(?:input_json_delta","partial_json":'
    + _STRING
    + rb'|text_delta","text":'
    + _STRING
    + rb")\}\}\n\n"
)


def anthropic(state: AnthropicState) -> Shortcut:
    """The shortcut of an Anthropic stream's argument and text deltas for an open block."""
    fullmatch = _ANTHROPIC.fullmatch
    blocks = state.blocks
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        match = fullmatch(chunk)
        if match is None or state.complete:
            return None
        index, plain, escaped, text_plain, text_escaped = match.groups()
        block = blocks.get(int(index))
        if block is None or block.done:
            return None
        if plain is not None or escaped is not None:
            call = block.call
            if call is None:
                return None
            fragment = _text(plain, escaped)
            if fragment is None:
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            return _delta(call.index, fragment)
        if not state.started:
            return None
        text = _text(text_plain, text_escaped)
        if text is None:
            return None
        if not text:
            return TAKEN
        block.parts.append(text)
        text_parts.append(text)
        return _text_delta(text)

    return take


# OpenAI Responses: an argument delta of an open call, with its `event:` line (OpenAI adds an obfuscation pad,
# which the state does not read).
_RESPONSES = re.compile(
    rb"event: response\.function_call_arguments\.delta\n"
    rb'data: \{"type":"response\.function_call_arguments\.delta","item_id":"'
    + _ASCII
    + rb'",'
    rb'"output_index":'
    + _INDEX
    + rb',"delta":'
    + _STRING
    + rb'(?:,"obfuscation":"'
    + _ASCII
    + rb'")?'
    rb',"sequence_number":(0|[1-9][0-9]{0,17})\}\n\n'
)


def responses(state: ResponsesState) -> Shortcut:
    """The shortcut of a Responses stream's argument deltas for an open call."""
    fullmatch = _RESPONSES.fullmatch
    items = state.items
    sequence = state.sequence

    def take(chunk: bytes) -> object:
        match = fullmatch(chunk)
        if match is None:
            return None
        index, plain, escaped, number_text = match.groups()
        number = int(number_text)
        if number in sequence:
            return None  # a repeat: the generic path counts it
        item = items.get(int(index))
        if item is None:
            return None
        call = item.call
        if call is None:
            return None
        fragment = _text(plain, escaped)
        if fragment is None:
            return None
        sequence.add(number)
        if not fragment or call.closed:
            return TAKEN
        call.parts.append(fragment)
        return _delta(call.index, fragment)

    return take


# State class name -> its shortcut factory, for SSE streams. By name, so that a stream imports only its own wire's
# state; a subclass (which may read more) has none.
_SSE: Mapping[str, Callable[[Any], Shortcut]] = MappingProxyType(
    {
        "OpenAIChatState": openai_chat,
        "AnthropicState": anthropic,
        "ResponsesState": responses,
    }
)


def sse_shortcut(state: WireState) -> Shortcut | None:
    """The shortcut for an SSE stream of this state, if its wire has known shapes."""
    factory = _SSE.get(type(state).__name__)
    return None if factory is None else factory(state)
