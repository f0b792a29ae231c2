# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Bedrock's known event shape (see `shapes`): an argument or text delta of a started block, in one eventstream message.

A message is checked as the decoder's `simple()` checks it (the read is one whole message of the length its prelude
says, the prelude's CRC, a header block naming an `event` of type `contentBlockDelta`, the message's CRC), and its
payload as its JSON text says. What repeats is checked once: a stream writes every delta of a block alike up to its
string, so a message whose bytes up to its string's opening quote (the prelude, the header block and the payload's
start, its one-digit block index in it) are, byte for byte, those of a message checked before is, up to there, that
message: one dict look-up of those bytes stands for the prelude's checks, the headers' and the payload start's. The
message's CRC is checked on every message, and a pattern reads the rest (the string and the padding) in place.
"""

from __future__ import annotations

import re
import struct
import zlib
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
from ...streams.eventstream import _MAX_EVENTSTREAM_MESSAGE
from ...streams.shapes import ASCII, INDEX, STRING, TAKEN, AnyState, Shortcut

# The payload (the `p` key is AWS's padding, which the state does not read): its start up to its string's opening
# quote, with the block index (of one digit, the start kept; of more, read as a whole below), and the rest from
# that quote on, for a toolUse input and for a text.
_PAYLOAD_START = re.compile(
    rb'\{"contentBlockIndex":([0-9]),"delta":\{(?:"toolUse":\{"input":()|"text":)"'
)
# An alternative with nothing, not an optional group: `re` gives a group that may repeat a state of its own.
_PADDING = rb'(?:,"p":"' + ASCII + rb'"|)\}'
_INPUT_REST = re.compile(STRING + rb"\}\}" + _PADDING)
_TEXT_REST = re.compile(STRING + rb"\}" + _PADDING)
_PAYLOAD = re.compile(
    rb'\{"contentBlockIndex":'
    + INDEX
    + rb',"delta":\{(?:"toolUse":\{"input":'
    + STRING
    + rb"\}|"
    + rb'"text":'
    + STRING
    + rb")\}"
    + _PADDING
)
_PRELUDE = struct.Struct(">III")
_UINT32 = struct.Struct(">I")
# Where the payload's start ends, up to its string's opening quote included, for toolUse and text; where its byte
# that tells the two apart is (`o` of toolUse, `e` of text), all after a one-digit index.
_INPUT_AT = len(b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"')
_TEXT_AT = len(b'{"contentBlockIndex":0,"delta":{"text":"')
_KIND_AT = len(b'{"contentBlockIndex":0,"delta":{"t')
_INDEX_AT = len(b'{"contentBlockIndex":')
# Message starts kept (a stream's deltas take a few hundred lengths, times its blocks, at most).
_MOST_KEPT = 4096


def bedrock(state: AnyState, decoder: Any) -> Shortcut:
    """The shortcut of a Bedrock stream's deltas for a started block, read through its eventstream decoder."""
    simple = decoder.simple
    # The decoder's buffer is one bytearray for its life: empty when no partial message is held.
    buffered = decoder._buf
    prelude = _PRELUDE.unpack_from
    crc_at = _UINT32.unpack_from
    crc32 = zlib.crc32
    input_rest = _INPUT_REST.fullmatch
    text_rest = _TEXT_REST.fullmatch
    blocks = state.blocks
    text_parts = state.text_parts
    # The header block of a contentBlockDelta as this stream writes it, and where the payload begins after it.
    headers = b"\x00"
    at = 0
    # The payload start's byte that tells toolUse from text, where each start ends, and its index digit.
    kind_at, input_at, text_at, index_at = _KIND_AT, _INPUT_AT, _TEXT_AT, _INDEX_AT
    # A message's bytes up to its string's opening quote -> its length, for messages checked before; and those
    # bytes less the prelude (the header block and the payload's start, the same for messages of every length).
    starts: dict[bytes, int] = {}
    beginnings: set[bytes] = set()

    def take(chunk: bytes) -> object:
        if buffered or decoder._failed:
            return None
        size = len(chunk)
        if size <= kind_at or chunk[kind_at] != 111:  # not the `o` of toolUse
            if starts.get(chunk[:text_at]) != size:
                return first(chunk, size, text_at)
            if crc32(chunk[:-4]) != crc_at(chunk, size - 4)[0]:
                return None
            match = text_rest(chunk, text_at - 1, size - 4)
            if match is None or state.complete:
                return None
            block = blocks.get(chunk[index_at] - 48)
            if block is None or block.done:
                return None
            return text(block, match[1], match[2])
        if starts.get(chunk[:input_at]) != size:
            return first(chunk, size, input_at)
        if crc32(chunk[:-4]) != crc_at(chunk, size - 4)[0]:
            return None
        match = input_rest(chunk, input_at - 1, size - 4)
        if match is None or state.complete:
            return None
        block = blocks.get(chunk[index_at] - 48)
        if block is None or block.done:
            return None
        call = block.call
        if call is None:
            return None
        plain, escaped = match.groups()
        # string_value and _delta inlined, as in openai_chat's shortcut.
        try:
            fragment = (
                parse_json(b'"' + plain + escaped + b'"') if escaped else plain.decode()
            )
        except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
            return None
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    def first(chunk: bytes, size: int, end: int) -> object:
        """A message whose start was not checked before: checked whole, its start kept when its index is one
        digit. A message of a new length after a beginning checked before needs only its prelude checked."""
        nonlocal headers, at, kind_at, input_at, text_at, index_at
        if size < 16 or size > _MAX_EVENTSTREAM_MESSAGE:
            return None
        total, held, crc = prelude(chunk)
        if total != size or held > total - 16 or crc32(chunk[:8]) != crc:
            return None
        if held + 12 == at and chunk[12:end] in beginnings and len(starts) < _MOST_KEPT:
            starts[chunk[:end]] = size
            return take(chunk)
        if held + 12 != at or not chunk.startswith(headers, 12):
            # Another header block: the decoder describes it; a contentBlockDelta's is kept for the next.
            if simple(chunk) is None or decoder.event != "contentBlockDelta":
                return None
            headers, at = chunk[12 : 12 + held], 12 + held
            kind_at, input_at = at + _KIND_AT, at + _INPUT_AT
            text_at, index_at = at + _TEXT_AT, at + _INDEX_AT
            starts.clear()
            beginnings.clear()
        if crc32(chunk[:-4]) != crc_at(chunk, size - 4)[0]:
            return None
        start = _PAYLOAD_START.match(chunk, at, size - 4)
        if start is None:
            match = _PAYLOAD.fullmatch(chunk, at, size - 4)
            if match is None:
                return None
            index, plain, escaped, text_plain, text_escaped = match.groups()
            tool = plain is not None
            if not tool:
                plain, escaped = text_plain, text_escaped
        else:
            tool = start[2] is not None
            match = (input_rest if tool else text_rest)(
                chunk, start.end() - 1, size - 4
            )
            if match is None:
                return None
            index, plain, escaped = start[1], match[1], match[2]
            if len(starts) < _MOST_KEPT:
                starts[chunk[: start.end()]] = size
                beginnings.add(chunk[12 : start.end()])
        if state.complete:
            return None
        block = blocks.get(int(index))
        if block is None or block.done:
            return None
        if not tool:
            return text(block, plain, escaped)
        call = block.call
        if call is None:
            return None
        try:
            fragment = (
                parse_json(b'"' + plain + escaped + b'"') if escaped else plain.decode()
            )
        except ValueError:
            return None
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    def text(block: Any, plain: bytes, escaped: bytes) -> object:
        """A text delta for a started block."""
        if not state.started:
            return None
        try:
            text = (
                parse_json(b'"' + plain + escaped + b'"') if escaped else plain.decode()
            )
        except ValueError:
            return None
        if not text:
            return TAKEN
        block.texts.append(text)
        text_parts.append(text)
        made = new_object(TextDelta)
        set_text(made, text)
        return made

    return take
