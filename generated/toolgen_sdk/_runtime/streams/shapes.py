# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Known event shapes: a wire's common read, matched whole by one regular expression instead of framed and parsed.

Nearly every read of a stream is one of a few events whose text never varies but for an index and a string (an
argument fragment, a text delta). For those, one compiled pattern `fullmatch`ed on the read does the framing, the
parse and most of the state's checks in one C call, and captures only what varies. A shortcut is sound: it takes
a read only when the generic path (framing, `parse_json`, the state's `feed`) would give the very same events and
state; a read of any other text (another key order, whitespace, an extra or repeated key, an escape, a non-ASCII
skipped field, CRLF where LF is matched, two events at once), or one the state would treat otherwise (a block
not open, a sequence number seen or one whose predecessor has not come, a repeat mark seen), is left to the
generic path, untouched.

A shortcut returns the one event the read makes, `TAKEN` when it took the read and makes none, or None when the
read is not its to take. The aggregator asks it only while its decoder holds no partial event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
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
    from .state import WireState

# A wire's stream state, typed as Any: a package carries only the stream modules of the wires it asks for, so
# this module, carried by all, may name none of them, not even for type checkers.
AnyState = Any

# One read in, its event, TAKEN, or None (not this shortcut's read).
Shortcut = Callable[[bytes], object]

TAKEN = object()

# A skipped string field: printable ASCII with no quote and no backslash, so its bytes are its value and the
# generic parse cannot fail on it (no escape, no invalid UTF-8, no control character).
_ASCII = rb"[ !#-\[\]-~]*"
# A captured string, in two groups: its text up to the first backslash, in the bytes a JSON string holds as they
# are (printable ASCII but quote and backslash, and bytes above 0x7f, checked as UTF-8 when decoded), and the rest
# from that backslash on (empty without one). The rest is taken as any bytes up to the first quote the pattern
# can go on after, and read by the generic parser itself: it takes them only when they are the rest of one string
# (every quote in them escaped), so that quote is the string's end, and its value (escapes, surrogate pairs, a
# lone surrogate it refuses) is the one the generic path reads; else the read is not taken. The classes are written
# as the bytes they take: `re` reads a set of ranges as a bitmap (about 23 instructions a byte), a negated one range
# by range (about 43), and a repeated group of escapes costs a state of its own per escape.
_STRING = rb'"([ !#-\[\]-\xff]*)(\\(?s:.)*?|)"'
# A JSON index: no leading zero, no sign, no exponent, and short enough that int() of it is cheap.
_INDEX = rb"(0|[1-9][0-9]{0,8})"


def _text(plain: bytes, escaped: bytes) -> str | None:
    """A captured JSON string's value, or None when the generic parser would reject it (it then sees the read).

    Without an escape the value is the text as UTF-8; with one, the generic parser reads the whole string, so
    the value (surrogate pairs, a lone surrogate it refuses) is the one the generic path reads."""
    try:
        if not escaped:
            return plain.decode()
        value = parse_json(b'"' + plain + escaped + b'"')
    except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
        return None
    return value if type(value) is str else None


# Index texts a shortcut keeps the int() of (a stream names a handful of blocks or calls, thousands of times).
_MOST_INDEXES = 1024


def _index(indexes: dict[bytes, int], text: bytes) -> int:
    """int() of an index text matched by _INDEX, kept in `indexes` for the reads that name it again."""
    value = int(text)
    if len(indexes) < _MOST_INDEXES:
        indexes[text] = value
    return value


# OpenAI chat: an argument fragment or a text delta of choice 0, as OpenAI sends them (head keys in OpenAI's
# order; the optional ones as other compatibles leave them out). The state's inline path reads nothing at the
# top level but the choices, usage (null here) and the obfuscation pad, which is kept as the generic path keeps
# it. The head is the same text on every chunk of a stream: once a whole chunk matched, its head is compared
# with startswith() (one memcmp, where the pattern reads byte by byte) and the pattern reads the rest.
_CHAT_HEAD = re.compile(
    rb'data: \{"id":"' + _ASCII + rb'","object":"chat\.completion\.chunk",'
    rb'"created":[0-9]{1,12},"model":"' + _ASCII + rb'",'
    rb'(?:"service_tier":"' + _ASCII + rb'",)?'
    rb'(?:"system_fingerprint":"' + _ASCII + rb'",)?'
    rb'(?:"usage":null,)?"choices":\[\{"index":0,"delta":\{'
)
_CHAT_REST = re.compile(
    rb'(?:"tool_calls":\[\{"index":'
    + _INDEX
    + rb',"function":\{"arguments":'
    + _STRING
    + rb'\}\}\]|"content":'
    + _STRING
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
        # _text, _new_mark and _delta inlined: this runs once per chunk of the usual stream, and a Python call
        # costs about a tenth of the chunk.
        if slot is not None:
            number = indexes.get(slot)
            if number is None:
                number = _index(indexes, slot)
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
        text = _text(text_plain, text_escaped)
        if text is None or not _new_mark(marks, mark, chunk):
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
    _INDEX
    + rb',"delta":\{"type":"(?:input_json_delta","partial_json":'
    + _STRING
    + rb'|text_delta","text":'
    + _STRING
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
        if not state.started or not chunk.startswith(text_start, at + 1):
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
            fragment = _text(plain, escaped)
            if call is None or fragment is None:
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        text = _text(text_plain, text_escaped)
        if text is None or not state.started:
            return None
        if not text:
            return TAKEN
        block.parts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take


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
    + _ASCII
    + rb')","output_index":'
    + _INDEX
    + rb',"delta":'
    + _STRING
    + rb'(?:,"obfuscation":"'
    + _ASCII
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
            key = _index(indexes, index)
        item = items.get(key)
        if item is None:
            return None
        call = item.call
        if call is None:
            return None
        # _text and _delta inlined, as in openai_chat's shortcut.
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


# Ollama: a text line (NDJSON). The start of a line (the model, then created_at's key) is the same text on every
# line of a stream: once a line matched, it is compared with startswith() and the pattern reads the rest. The state
# keeps each line by its created_at, to tell a line sent again: a line the pattern took with no escape is kept as
# its text, which is then that line's one spelling (two such lines are the same payload when their texts are),
# any other as the payload the parse gives.
_OLLAMA_HEAD = re.compile(rb'\{"model":"(' + _ASCII + rb')","created_at":"')
_OLLAMA_REST = re.compile(
    rb"("
    + _ASCII
    + rb')","message":\{"role":"assistant","content":'
    + _STRING
    + rb'\},"done":false\}\n'
)
_OLLAMA_TOP = frozenset({"model", "created_at", "done"})


def ollama(state: AnyState, decoder: Any = None) -> Shortcut:
    """The shortcut of an Ollama stream's text lines."""
    head_match = _OLLAMA_HEAD.match
    rest_match = _OLLAMA_REST.fullmatch
    top = state.top
    lines = state.lines
    content = state.content
    text_parts = state.text_parts
    # The start of the line taken last and its model; no line starts with a NUL byte.
    head = b"\x00"
    model = ""
    # The top holds the three keys a line sets (which the stream never takes away again).
    topped = False

    def take(chunk: bytes) -> object:
        nonlocal head, model, topped
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
            head, model = chunk[: found.end()], found[1].decode()
        if state.complete or not state.started:
            return None
        if not topped:
            topped = top.keys() >= _OLLAMA_TOP
            if not topped:
                return None
        stamp_text, plain, escaped = match.groups()
        try:
            text = _text(plain, escaped) if escaped else plain.decode()
        except ValueError:  # invalid UTF-8
            return None
        if text is None:
            return None
        stamp = stamp_text.decode()
        kept = lines.get(stamp)
        if escaped:
            payload = {
                "model": model,
                "created_at": stamp,
                "message": {"role": "assistant", "content": text},
                "done": False,
            }
            if kept is not None and (type(kept) is bytes or kept == payload):
                return None  # maybe a line sent again: the generic path compares and counts it
            lines[stamp] = payload
        else:
            if kept is not None and (
                kept == chunk
                or kept
                == {
                    "model": model,
                    "created_at": stamp,
                    "message": {"role": "assistant", "content": text},
                    "done": False,
                }
            ):
                return None  # a line sent again: the generic path counts it
            lines[stamp] = chunk
        top["model"], top["created_at"], top["done"] = model, stamp, False
        state.role = "assistant"
        if not text:
            return TAKEN
        content.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take


# Framing -> the factory of a wire's shortcut there: a state class's `known_shapes`, which only that class has (a
# subclass, which may read more, has none). Each wire's table is on its state, so that a package carries the
# shortcuts of the wires it carries and no other.
KnownShapes = Mapping[str, Callable[[Any, Any], Shortcut]]


def shortcut_for(state: WireState, decoder: Any, framing: str) -> Shortcut | None:
    """The shortcut for a stream of this state through this decoder, if its wire has known shapes there."""
    known: KnownShapes | None = vars(type(state)).get("known_shapes")
    factory = None if known is None else known.get(framing)
    return None if factory is None else factory(state, decoder)


def gemini(state: AnyState) -> Shortcut:
    """Gemini's shortcut for SSE reads (in `gemini_shapes`, carried with its wire)."""
    made: Shortcut = type(state).known_shapes["sse"](state, None)
    return made


def bedrock(state: AnyState, decoder: Any) -> Shortcut:
    """Bedrock's shortcut for eventstream reads (in `bedrock_shapes`, carried with its wire)."""
    made: Shortcut = type(state).known_shapes["eventstream"](state, decoder)
    return made
