# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""JSON framed by its structure, not by lines: Gemini's streamed array, and a whole body spread over many lines."""

from __future__ import annotations

import re

from .frames import Frame

_ARRAY_STRUCTURE = re.compile(rb'[{}\[\]"]')
_STRING_SPECIAL = re.compile(rb'["\\]')
# What may stand between the documents of a body: whitespace, and the brackets and commas of an outer array.
_BETWEEN = b" \t\r\n[],"


class JSONArrayDecoder:
    """A JSON array of objects streamed element by element (Gemini `alt=json`): each object is one frame.

    Separators, whitespace and the brackets of the outer array are skipped; nesting is tracked outside strings.
    """

    __slots__ = ("_buf", "_depth", "_in_string", "_pos", "_start")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._start = 0
        self._depth = 0
        self._in_string = False

    def feed(self, chunk: bytes) -> list[Frame]:
        buf = self._buf
        buf += chunk
        out: list[Frame] = []
        i = self._pos
        n = len(buf)
        while i < n:
            if self._in_string:
                match = _STRING_SPECIAL.search(buf, i)
                if match is None:
                    i = n
                    break
                j = match.start()
                if (
                    buf[j] == 0x5C
                ):  # a backslash escapes the next byte, which may not have arrived yet
                    if j + 1 >= n:
                        i = j
                        break
                    i = j + 2
                    continue
                self._in_string = False
                i = j + 1
            elif self._depth == 0:
                j = buf.find(b"{", i)
                self._between(buf, i, n if j < 0 else j, out)
                if j < 0:
                    i = n
                    break
                self._start = j
                self._depth = 1
                i = j + 1
            else:
                i = self._structure(buf, i, n, out)
        self._pos = i
        if self._depth == 0 and i:
            # Everything before i is consumed; keeping it would make every later search longer.
            del buf[:i]
            self._pos = 0
        return out

    def _between(self, buf: bytearray, start: int, end: int, out: list[Frame]) -> None:
        """What stands between two objects: the array's separators, skipped."""

    def _structure(self, buf: bytearray, i: int, n: int, out: list[Frame]) -> int:
        match = _ARRAY_STRUCTURE.search(buf, i)
        if match is None:
            return n
        j = match.start()
        byte = buf[j]
        if byte == 0x22:
            self._in_string = True
        elif byte in b"{[":
            self._depth += 1
        else:
            self._depth -= 1
            if self._depth == 0:
                out.append(Frame(None, bytes(buf[self._start : j + 1])))
        return j + 1

    def close(self) -> list[Frame]:
        if self._depth:
            # An element cut off mid-way: hand it on, so the parser reports it instead of it vanishing.
            rest = bytes(self._buf[self._start :])
            self._buf.clear()
            self._depth = 0
            return [Frame(None, rest)]
        return []


class JSONDocumentDecoder(JSONArrayDecoder):
    """JSON objects one after another, each over any number of lines (a pretty-printed whole body): one frame each.

    An outer array is read as its elements, as JSONArrayDecoder reads it. Anything else between the objects (text
    that is no JSON object) is handed on as a frame of its own, so that the parser reports it instead of it being
    skipped in silence.
    """

    __slots__ = ()

    def _between(self, buf: bytearray, start: int, end: int, out: list[Frame]) -> None:
        if start < end:
            stray = bytes(buf[start:end]).strip(_BETWEEN)
            if stray:
                out.append(Frame(None, stray))
