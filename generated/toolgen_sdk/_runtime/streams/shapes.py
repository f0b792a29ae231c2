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
# A captured string, in two groups: its text up to the first escape, and the rest (empty without an escape).
# One pass with no backtracking (possessive quantifiers need Python 3.11); raw bytes above 0x7f are checked as
# UTF-8 when decoded, control characters are not matched, and an escape is read by the generic parser itself.
_STRING = rb'"([^"\\\x00-\x1f]*)((?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*)"'
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
    rb'(?:,"obfuscation":"([ !#-\[\]-~]{0,64})")?\}\n\n'
)


def openai_chat(state: AnyState) -> Shortcut:
    """The shortcut of an OpenAI chat stream's argument and text chunks."""
    head_match = _CHAT_HEAD.match
    rest_match = _CHAT_REST.fullmatch
    marks = state.marks
    text_parts = state.text_parts
    # The head text of the last chunk taken; no read starts with a NUL byte.
    head = b"\x00"

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
            call = choice.slots.get(int(slot))
            if call is None or call.closed:
                return None
            if escaped:
                fragment = _text(plain, escaped)
                if fragment is None:
                    return None
            else:
                try:
                    fragment = plain.decode()
                except ValueError:
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


# Anthropic: a text or argument delta of a content block, with its `event:` line; the fixed start is compared
# with startswith(), the pattern reads the rest.
_ANTHROPIC_START = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
)
_ANTHROPIC_REST = re.compile(
    _INDEX
    + rb',"delta":\{"type":"(?:input_json_delta","partial_json":'
    + _STRING
    + rb'|text_delta","text":'
    + _STRING
    + rb")\}\}\n\n"
)


def anthropic(state: AnyState) -> Shortcut:
    """The shortcut of an Anthropic stream's argument and text deltas for an open block."""
    start = _ANTHROPIC_START
    at = len(start)
    rest_match = _ANTHROPIC_REST.fullmatch
    blocks = state.blocks
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        if not chunk.startswith(start):
            return None
        match = rest_match(chunk, at)
        if match is None or state.complete:
            return None
        index, plain, escaped, text_plain, text_escaped = match.groups()
        block = blocks.get(int(index))
        if block is None or block.done:
            return None
        if plain is not None:
            call = block.call
            if call is None:
                return None
            # _text and _delta inlined, as in openai_chat's shortcut.
            try:
                fragment = _text(plain, escaped) if escaped else plain.decode()
            except ValueError:
                return None
            if fragment is None:
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        if not state.started:
            return None
        try:
            text = (
                _text(text_plain, text_escaped) if text_escaped else text_plain.decode()
            )
        except ValueError:
            return None
        if text is None:
            return None
        if not text:
            return TAKEN
        block.parts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take


# OpenAI Responses: an argument delta of an open call, with its `event:` line (OpenAI adds an obfuscation pad,
# which the state does not read).
_RESPONSES_START = (
    b"event: response.function_call_arguments.delta\n"
    b'data: {"type":"response.function_call_arguments.delta","item_id":"'
)
_RESPONSES_REST = re.compile(
    rb"("
    + _ASCII
    + rb')","output_index":'
    + _INDEX
    + rb',"delta":'
    + _STRING
    + rb'(?:,"obfuscation":"'
    + _ASCII
    + rb'")?'
    rb',"sequence_number":(0|[1-9][0-9]{0,17})\}\n\n'
)


def responses(state: AnyState) -> Shortcut:
    """The shortcut of a Responses stream's argument deltas for an open call."""
    start = _RESPONSES_START
    at = len(start)
    rest_match = _RESPONSES_REST.fullmatch
    items = state.items
    sequence = state.sequence

    def take(chunk: bytes) -> object:
        if not chunk.startswith(start):
            return None
        match = rest_match(chunk, at)
        if match is None:
            return None
        item_id, index, plain, escaped, number_text = match.groups()
        number = int(number_text)
        if number in sequence or number - 1 not in sequence:
            # A repeat, or an event out of order: the generic path judges it.
            return None
        item = items.get(int(index))
        if item is None:
            return None
        call = item.call
        if call is None:
            return None
        # _text and _delta inlined, as in openai_chat's shortcut.
        try:
            fragment = _text(plain, escaped) if escaped else plain.decode()
        except ValueError:
            return None
        if fragment is None:
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


# Gemini: a text chunk of candidate 0 (SSE, CRLF as Google sends it, or LF). Each chunk repeats the head
# (modelVersion, usageMetadata, responseId), which the state keeps as the latest values: taken as the generic
# path takes them, usageMetadata parsed by the generic parser unless its text is the one parsed last.
_GEMINI_START = b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":'
# What follows a chunk's one part: the candidate's index and the head Gemini repeats on every chunk.
_GEMINI_TAIL = (
    rb'\}\]\},"index":0\}\],"modelVersion":"(' + _ASCII + rb')",'
    rb'"usageMetadata":(\{(?:"[A-Za-z]{1,64}":[0-9]{1,16},){0,16}"[A-Za-z]{1,64}":[0-9]{1,16}\}),'
    rb'"responseId":"(' + _ASCII + rb')"\}(?:\r\n\r\n|\n\n)'
)
_GEMINI_REST = re.compile(_STRING + _GEMINI_TAIL)
# A streamed call's string argument going on under the jsonPath of the entry before (Gemini 3's partialArgs).
_GEMINI_PARTIAL_START = b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"'
_GEMINI_PARTIAL_REST = re.compile(
    rb"("
    + _ASCII
    + rb')","stringValue":'
    + _STRING
    + rb',"willContinue":(true|false)\}\],'
    rb'"willContinue":true\}' + _GEMINI_TAIL
)
# A set, so that one keys() comparison (a C call) asks for all three.
_GEMINI_HEAD = frozenset({"modelVersion", "usageMetadata", "responseId"})


def gemini(state: AnyState) -> Shortcut:
    """The shortcut of a Gemini stream's text chunks, once candidate 0 has text, and of a streamed call's string
    argument going on (partialArgs) while candidate 0 streams that call."""
    start = _GEMINI_START
    at = len(start)
    rest_match = _GEMINI_REST.fullmatch
    partial_start = _GEMINI_PARTIAL_START
    partial_at = len(partial_start)
    partial_match = _GEMINI_PARTIAL_REST.fullmatch
    head = state.head
    candidates = state.candidates
    text_parts = state.text_parts
    usage: list[Any] = [b"", None]  # the usageMetadata text parsed last, and its value

    def usage_of(text: bytes) -> bool:
        """Whether the usageMetadata text parses; its value is then usage[1]."""
        if text != usage[0] or head["usageMetadata"] is not usage[1]:
            try:
                value = parse_json(text)
            except ValueError:
                return False
            usage[0], usage[1] = text, value
        return True

    def set_head(model: bytes, response_id: bytes) -> None:
        head["modelVersion"] = model.decode()
        head["usageMetadata"] = usage[1]
        head["responseId"] = response_id.decode()

    def take(chunk: bytes) -> object:
        if chunk.startswith(partial_start):
            return take_partial(chunk)
        if not chunk.startswith(start):
            return None
        match = rest_match(chunk, at)
        if match is None or not state.started:
            return None
        candidate = candidates.get(0)
        if candidate is None or candidate.finished or not candidate.primary:
            return None
        parts = candidate.parts
        last = parts[-1] if parts else None
        if (
            last is None
            or last[1] is None
            or last[0].get("thought")
            or "thoughtSignature" in last[0]
            or "index" not in candidate.fields
            or not head.keys() >= _GEMINI_HEAD
        ):
            return None
        plain, escaped, model, usage_text, response_id = match.groups()
        text = _text(plain, escaped)
        if not text:
            return None  # an empty part (as with a finishReason), or a string the parser rejects
        if not usage_of(usage_text):
            return None
        candidate.role = "model"
        last[1].append(text)
        candidate.fields["index"] = 0
        set_head(model, response_id)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    def take_partial(chunk: bytes) -> object:
        match = partial_match(chunk, partial_at)
        if match is None or not state.started:
            return None
        candidate = candidates.get(0)
        if candidate is None or candidate.finished or not candidate.primary:
            return None
        args, call = candidate.args, candidate.call
        if (
            args is None
            or call is None
            or "index" not in candidate.fields
            or not head.keys() >= _GEMINI_HEAD
        ):
            return None
        path, plain, escaped, more, model, usage_text, response_id = match.groups()
        value = _text(plain, escaped)
        if value is None or not usage_of(usage_text):
            return None
        # Checked, then applied, by the call's own PartialArgs: None leaves it untouched.
        fragment = args.appended(path.decode(), value, more == b"true")
        if fragment is None:
            return None
        candidate.role = "model"
        candidate.fields["index"] = 0
        set_head(model, response_id)
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    return take


# Ollama: a text line (NDJSON). The state keeps each line's payload by its created_at, to tell a line sent again:
# the shortcut builds the payload the parse would give and compares it as the generic path does.
_OLLAMA = re.compile(
    rb'\{"model":"(' + _ASCII + rb')","created_at":"(' + _ASCII + rb')",'
    rb'"message":\{"role":"assistant","content":' + _STRING + rb'\},"done":false\}\n'
)
_OLLAMA_TOP = ("model", "created_at", "done")


def ollama(state: AnyState) -> Shortcut:
    """The shortcut of an Ollama stream's text lines."""
    fullmatch = _OLLAMA.fullmatch
    top = state.top
    lines = state.lines
    content = state.content
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        match = fullmatch(chunk)
        if (
            match is None
            or state.complete
            or not state.started
            or not all(key in top for key in _OLLAMA_TOP)
        ):
            return None
        model_text, stamp_text, plain, escaped = match.groups()
        text = _text(plain, escaped)
        if text is None:
            return None
        model, stamp = model_text.decode(), stamp_text.decode()
        payload = {
            "model": model,
            "created_at": stamp,
            "message": {"role": "assistant", "content": text},
            "done": False,
        }
        if lines.get(stamp) == payload:
            return None  # a line sent again: the generic path counts it
        lines[stamp] = payload
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


# Bedrock ConverseStream: an argument or text delta of a started block, in one AWS eventstream message. The
# decoder's simple() checks the message (length, both CRCs, headers) and names its event, as on the generic path;
# the pattern reads only the payload (the `p` key is AWS's padding, which the state does not read).
_BEDROCK = re.compile(
    rb'\{"contentBlockIndex":'
    + _INDEX
    + rb',"delta":\{(?:"toolUse":\{"input":'
    + _STRING
    + rb'\}|"text":'
    + _STRING
    + rb')\}(?:,"p":"'
    + _ASCII
    + rb'")?\}'
)


def bedrock(state: AnyState, decoder: Any) -> Shortcut:
    """The shortcut of a Bedrock stream's deltas for a started block, read through its eventstream decoder."""
    simple = decoder.simple
    fullmatch = _BEDROCK.fullmatch
    blocks = state.blocks
    text_parts = state.text_parts

    def take(chunk: bytes) -> object:
        payload = simple(chunk)
        # A payload not taken here is read again by the generic path: simple() consumes nothing.
        if payload is None or decoder.event != "contentBlockDelta":
            return None
        match = fullmatch(payload)
        if match is None or state.complete:
            return None
        index, plain, escaped, text_plain, text_escaped = match.groups()
        block = blocks.get(int(index))
        if block is None or block.done:
            return None
        if plain is not None:
            call = block.call
            if call is None:
                return None
            # _text and _delta inlined, as in openai_chat's shortcut.
            try:
                fragment = _text(plain, escaped) if escaped else plain.decode()
            except ValueError:
                return None
            if fragment is None:
                return None
            if not fragment:
                return TAKEN
            call.parts.append(fragment)
            event = new_object(ToolCallDelta)
            set_delta_index(event, call.index)
            set_delta_arguments(event, fragment)
            return event
        if not state.started:
            return None
        try:
            text = (
                _text(text_plain, text_escaped) if text_escaped else text_plain.decode()
            )
        except ValueError:
            return None
        if text is None:
            return None
        if not text:
            return TAKEN
        block.texts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take


# State class name -> its shortcut factory, by framing. By name, so that a stream imports only its own wire's
# state; a subclass (which may read more) has none.
_SSE: Mapping[str, Callable[[Any], Shortcut]] = MappingProxyType(
    {
        "OpenAIChatState": openai_chat,
        "AnthropicState": anthropic,
        "ResponsesState": responses,
        "GeminiState": gemini,
    }
)
_JSON_LINES: Mapping[str, Callable[[Any], Shortcut]] = MappingProxyType(
    {"OllamaState": ollama}
)
_BY_FRAMING = MappingProxyType({"sse": _SSE, "jsonl": _JSON_LINES})


def shortcut_for(state: WireState, decoder: Any, framing: str) -> Shortcut | None:
    """The shortcut for a stream of this state through this decoder, if its wire has known shapes there."""
    name = type(state).__name__
    if framing == "eventstream":
        # The eventstream checks (CRCs, headers) stay the decoder's: the shortcut calls its simple().
        bedrock_state: Any = state
        return bedrock(bedrock_state, decoder) if name == "BedrockState" else None
    table = _BY_FRAMING.get(framing)
    factory = None if table is None else table.get(name)
    return None if factory is None else factory(state)
