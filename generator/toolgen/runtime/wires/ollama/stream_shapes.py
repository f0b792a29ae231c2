# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Ollama's known event shapes (see `streams/shapes.py`): a text line of its NDJSON stream."""

from __future__ import annotations

import re
from typing import Any

from ...streams.events import (
    TextDelta,
    new_object,
    set_text,
)
from ...streams.shapes import (
    ASCII,
    STRING,
    TAKEN,
    AnyState,
    Shortcut,
    string_value,
)

# Ollama: a text line (NDJSON). The start of a line (the model, then created_at's key) is the same text on every
# line of a stream: once a line matched, it is compared with startswith() and the pattern reads the rest. The state
# keeps each line by its created_at, to tell a line sent again: a line the pattern took with no escape is kept as
# its text, which is then that line's one spelling (two such lines are the same payload when their texts are),
# any other as the payload the parse gives.
_OLLAMA_HEAD = re.compile(rb'\{"model":"(' + ASCII + rb')","created_at":"')
_OLLAMA_REST = re.compile(
    rb"("
    + ASCII
    + rb')","message":\{"role":"assistant","content":'
    + STRING
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
            text = string_value(plain, escaped) if escaped else plain.decode()
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
