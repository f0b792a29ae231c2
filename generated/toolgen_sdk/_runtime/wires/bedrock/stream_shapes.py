# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Bedrock's known event shape (see `shapes`): an argument or text delta of a started block, in one eventstream message.

A message is checked as the decoder's `simple()` checks it (the read is one whole message of the length its prelude
says, the prelude's CRC, a header block naming an `event` of type `contentBlockDelta`, the message's CRC), and its
payload as its JSON text says. What repeats is checked once: a stream writes every delta of a block alike but for
its string (and AWS's padding), so a message whose bytes up to its string's opening quote (the prelude, the header
block and the payload's start, its one-digit block index in it) are, byte for byte, those of the message of its
length checked last is, up to there, that message: one comparison stands for the prelude's checks, the headers'
and the payload start's. When the bytes after its string (the payload's end and the padding) are those of that
message too, the string, quotes and all, is read by `from_json`, which takes it only when it is one whole string;
else a pattern reads the string and the padding in place. The message's CRC is checked on every message.
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
# Where the payload's start ends, up to its string's opening quote included, for toolUse and text, and where its
# byte that tells the two apart is (`o` of toolUse, `e` of text), all after a one-digit index.
_INPUT_AT = len(b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"')
_TEXT_AT = len(b'{"contentBlockIndex":0,"delta":{"text":"')
_KIND_AT = len(b'{"contentBlockIndex":0,"delta":{"t')
# What is kept of a message checked (see `known` below).
_Kept = tuple[bytes, int, int, bool, bytes, int, int, bytes]
# Message lengths kept (a stream's deltas take a few hundred lengths, at most).
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
    # A message length -> the message of that length checked last: its bytes up to its string's opening quote,
    # their length, its block index, whether its string is a toolUse input, its bytes from its string's closing
    # quote to its CRC and where they begin, the CRC of its bytes before that opening quote, and its bytes after
    # that closing quote: a message that has them all is checked by the CRC of its string and its end alone.
    known: dict[int, _Kept] = {}
    # The header block and the payload's start of a message checked before (its bytes from the end of its prelude
    # to its string's opening quote, the same for messages of every length) -> its block index, and whether its
    # string is a toolUse input.
    beginnings: dict[bytes, tuple[int, bool]] = {}

    def take(chunk: bytes) -> object:
        if buffered or decoder._failed:
            return None
        size = len(chunk)
        try:
            entry = known[size]
        except KeyError:
            return first(chunk, size)
        begin, width, index, tool, end, cut, begin_crc, after = entry
        if chunk[:width] != begin:
            return first(chunk, size)
        if chunk[cut:-4] != end:
            return padded(chunk, size, entry)
        quoted = chunk[width - 1 : cut + 1]
        # The CRC of its bytes: of its start's, kept, then of its string's and its end's.
        if crc32(after, crc32(quoted, begin_crc)) != crc_at(chunk, size - 4)[0]:
            return None
        if state.complete:
            return None
        try:
            block = blocks[index]
        except KeyError:
            return None
        if block.done:
            return None
        if not tool:
            return text(block, quoted)
        call = block.call
        if call is None:
            return None
        try:
            # The string, quotes and all: the parser takes it only when it is one whole string.
            fragment = parse_json(quoted)
        except ValueError:
            return None
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    def padded(chunk: bytes, size: int, entry: _Kept) -> object:
        """A message of a start checked before whose bytes after its string differ (AWS pads its payloads to
        lengths of its own): its CRC checked, then its string and padding read by a pattern, and its end kept."""
        begin, width, index, tool, _, _, begin_crc, _ = entry
        if crc32(chunk[width - 1 : -4], begin_crc) != crc_at(chunk, size - 4)[0]:
            return None
        match = (input_rest if tool else text_rest)(chunk, width - 1, size - 4)
        if match is None:
            return None
        cut = match.end(2)
        known[size] = (
            begin,
            width,
            index,
            tool,
            chunk[cut:-4],
            cut,
            begin_crc,
            chunk[cut + 1 : -4],
        )
        return delta(index, tool, chunk[width - 1 : cut + 1])

    def first(chunk: bytes, size: int) -> object:
        """A message of a length not checked before (or of another start): checked whole, kept by its length when
        its block index is one digit. After a message of the same start, of any length, only its prelude and CRC
        are checked before its string and padding are read."""
        nonlocal headers, at
        if size < 16 or size > _MAX_EVENTSTREAM_MESSAGE:
            return None
        total, held, crc = prelude(chunk)
        if total != size or held > total - 16 or crc32(chunk[:8]) != crc:
            return None
        seen = None
        if held + 12 == at:
            # The header block and the payload's start of a message checked before, up to its string's opening
            # quote: where that quote is depends on the byte that tells toolUse (`o`) from text.
            width = at + (
                _INPUT_AT
                if chunk[at + _KIND_AT : at + _KIND_AT + 1] == b"o"
                else _TEXT_AT
            )
            seen = beginnings.get(chunk[12:width])
        if seen is None:
            if held + 12 != at or not chunk.startswith(headers, 12):
                # Another header block: the decoder describes it; a contentBlockDelta's is kept for the next.
                if simple(chunk) is None or decoder.event != "contentBlockDelta":
                    return None
                headers, at = chunk[12 : 12 + held], 12 + held
                known.clear()
                beginnings.clear()
            start = _PAYLOAD_START.match(chunk, at, size - 4)
            if start is None:
                if crc32(chunk[:-4]) != crc_at(chunk, size - 4)[0]:
                    return None
                match = _PAYLOAD.fullmatch(chunk, at, size - 4)
                if match is None:
                    return None
                index, plain, escaped, text_plain, text_escaped = match.groups()
                tool = plain is not None
                if not tool:
                    plain, escaped = text_plain, text_escaped
                return delta(int(index), tool, b'"' + plain + escaped + b'"')
            tool = start[2] is not None
            width = start.end()
            number = int(start[1])
            if len(beginnings) < _MOST_KEPT:
                beginnings[chunk[12:width]] = (number, tool)
        else:
            number, tool = seen
        # The message's CRC, from its start's, which is kept with it.
        begin_crc = crc32(chunk[: width - 1])
        if crc32(chunk[width - 1 : -4], begin_crc) != crc_at(chunk, size - 4)[0]:
            return None
        match = (input_rest if tool else text_rest)(chunk, width - 1, size - 4)
        if match is None:
            return None
        cut = match.end(2)
        if len(known) < _MOST_KEPT:
            known[size] = (
                chunk[:width],
                width,
                number,
                tool,
                chunk[cut:-4],
                cut,
                begin_crc,
                chunk[cut + 1 : -4],
            )
        return delta(number, tool, chunk[width - 1 : cut + 1])

    def delta(index: int, tool: bool, quoted: bytes) -> object:
        """The delta of a checked message, its string (quotes and all) not yet parsed."""
        if state.complete:
            return None
        block = blocks.get(index)
        if block is None or block.done:
            return None
        if not tool:
            return text(block, quoted)
        call = block.call
        if call is None:
            return None
        try:
            fragment = parse_json(quoted)
        except ValueError:
            return None
        if not fragment:
            return TAKEN
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        return event

    def text(block: Any, quoted: bytes) -> object:
        """A text delta for a started text block (one for a block of another kind is the generic path's to refuse)."""
        if not state.started or block.kind != "text":
            return None
        try:
            text = parse_json(quoted)
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
