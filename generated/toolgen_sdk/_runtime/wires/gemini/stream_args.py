# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini's streamed call arguments: `partialArgs` entries (a JSON path and a value) into an object and live JSON."""

from __future__ import annotations

import json
import re
from typing import Any

_PATH_TOKEN = re.compile(
    r"\.([^.\[\]]+)|\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]"
)
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")
# What json.dumps(text, ensure_ascii=False) escapes in a string; one encoder, since dumps with options makes one
# per call.
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_JSON = json.JSONEncoder(ensure_ascii=False)


def parse_json_path(path: str) -> tuple[str | int, ...] | None:
    """The keys and indexes of an RFC 9535 path like `$.recipe.steps[0]` or `$['a b']`; None if it is not one."""
    parsed = _parse_path(path)
    return None if parsed is None else parsed[0]


def _parse_path(path: str) -> tuple[tuple[str | int, ...], int] | None:
    """parse_json_path's tokens, and where the last one starts in the text (the path's length when none)."""
    if not path.startswith("$"):
        return None
    tokens: list[str | int] = []
    pos = last = 1
    while pos < len(path):
        match = _PATH_TOKEN.match(path, pos)
        if match is None:
            return None
        tokens.append(_token(match))
        last, pos = pos, match.end()
    return tuple(tokens), last


def _token(match: re.Match[str]) -> str | int:
    name, index, single, double = match.groups()
    if index is not None:
        return int(index)
    if name is not None:
        return name
    return _unescape(single if single is not None else double)


def _member_token(text: str) -> str | int | None:
    """The token of a path's text after its container's, when it is one `[index]` or `.name` (what _PATH_TOKEN
    reads it as); None for any other text, quoted names included."""
    if text[:1] == "[":
        digits = text[1:-1]
        # `\\d` in a str pattern is any Unicode decimal digit, as isdecimal() says.
        return int(digits) if text[-1:] == "]" and digits.isdecimal() else None
    name = text[1:]
    if text[:1] != "." or not name or "." in name or "[" in name or "]" in name:
        return None
    return name


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


class PartialArgs:
    """Rebuilds a call's arguments from `partialArgs` entries, and writes them as JSON text while it can.

    The text is exact while paths arrive depth-first in document order (what Gemini sends); a path that would
    reopen a finished object or array stops the live text, and the final arguments come from the object.
    """

    __slots__ = (
        "_counts",
        "_fragments",
        "_keys",
        "_kinds",
        "_last_path",
        "_open",
        "_seen",
        "_string",
        "live",
        "problems",
        "values",
    )

    def __init__(self) -> None:
        # path -> [is_string, fragments or value]; dict order is first arrival, which is the key order.
        self.values: dict[tuple[str | int, ...], list[Any]] = {}
        self.live = True
        # What made the arguments doubtful, each naming its jsonPath: the object is no longer what the model sent.
        self.problems: list[str] = []
        self._string: tuple[str | int, ...] | None = None
        # The fragments of that open string (its entry in values), None while no string is open.
        self._fragments: list[str] | None = None
        self._open = False
        self._keys: list[str | int] = []
        self._kinds: list[str] = []
        self._counts: list[int] = []
        self._seen: list[set[str]] = []
        # The last jsonPath as sent, as parsed, and its text before its last token: a string streamed in many
        # fragments repeats its path each time, and the next member of an object or array shares its container's.
        self._last_path: tuple[str, tuple[str | int, ...] | None, str] = ("", None, "")

    def apply(self, entry: dict[str, Any]) -> str:
        """Take one entry; returns the JSON text it adds (empty once the live text has stopped)."""
        raw = str(entry.get("jsonPath") or "")
        if raw == self._last_path[0]:
            path = self._last_path[1]
        else:
            parsed = _parse_path(raw)
            path = None if parsed is None else parsed[0]
            self._last_path = (raw, path, "" if parsed is None else raw[: parsed[1]])
        if not path:
            self.live = False
            self.problems.append(
                f"a partialArgs entry whose jsonPath {raw!r} is no JSON path to a member: dropped"
            )
            return ""
        kind, value = _entry_value(entry)
        if kind is None:
            self.live = False
            self.problems.append(
                f"a partialArgs entry at jsonPath {raw!r} carries no value: dropped"
            )
            return ""
        continues = bool(entry.get("willContinue"))
        slot = self.values.get(path)
        appending = (
            slot is not None and slot[0] and self._string == path and kind == "string"
        )
        if slot is not None and not appending:
            before = "".join(slot[1]) if slot[0] else slot[1]
            if (
                continues
                or slot[0] != (kind == "string")
                or type(before) is not type(value)
                or before != value
            ):
                # The same path sent again is a repeat only when it says the very same thing.
                self.problems.append(
                    f"jsonPath {raw!r} came again with another value: the later one is taken"
                )
        if kind == "string":
            if appending:
                assert slot is not None
                slot[1].append(value)
            else:
                self.values[path] = [True, [value]]
        else:
            self.values[path] = [False, value]
        text = self._write(path, kind, value, continues, appending) if self.live else ""
        if kind == "string" and continues:
            self._string, self._fragments = path, self.values[path][1]
        else:
            self._string = self._fragments = None
        return text

    def string_entry(
        self, raw: str, value: str, continues: bool, plain: bool
    ) -> str | None:
        """What apply() makes of a string entry that goes on with the string the entry before left open, under the
        very same jsonPath text, or that begins a new member beside it, the next of the same object or array (the
        entries Gemini sends most): the JSON text it adds. None, and nothing changed, for any other entry. `plain`
        says the value holds nothing JSON escapes (it came with none), so that it is its own JSON text."""
        last_raw, path, container = self._last_path
        if not path:
            return None
        if raw == last_raw:
            # The string left open is the last path's, when one is open (apply() and this keep them so).
            fragments = self._fragments
            if fragments is None:
                return None
            fragments.append(value)
            if not continues:
                self._string = self._fragments = None
            if not self.live:
                return ""
            return (value if plain else _escape(value)) + ("" if continues else '"')
        counts, kinds = self._counts, self._kinds
        count = counts[-1] if counts else -1
        token: str | int | None
        if self.live and kinds and kinds[-1] == "[" and raw == f"{container}[{count}]":
            token = count  # the next item of the array the last path is in: its text says so, no parse needed
        elif raw.startswith(container):
            token = _member_token(raw[len(container) :])
            if token is None:
                return None
        else:
            return None
        new = path[:-1] + (token,)
        if new in self.values:
            return None
        fragments = [value]
        self.values[new] = [True, fragments]
        self._last_path = (raw, new, container)
        opened = self._string is not None
        if continues:
            self._string, self._fragments = new, fragments
        else:
            self._string = self._fragments = None
        if not self.live:
            return ""
        # The live text stands in the last path's container, which is the new one's: only the member is new.
        string = '"' + (value if plain else _escape(value)) + ("" if continues else '"')
        if token == count and kinds[-1] == "[" and type(token) is int:
            # The next item of an array (what _member writes for it, without its call).
            counts[-1] = count + 1
            return ('"' if opened else "") + ("," if count else "") + string
        out = ['"'] if opened else []
        if not self._member(token, out):
            self.live = False
            return ""
        out.append(string)
        return "".join(out)

    def close(self) -> str:
        """The text that closes everything still open."""
        if not self.live:
            return ""
        if not self._open:
            return "{}"
        out = ['"'] if self._string is not None else []
        out.extend("}" if kind == "{" else "]" for kind in reversed(self._kinds))
        self._kinds.clear()
        return "".join(out)

    def build(self) -> dict[str, Any]:
        """The arguments object; a path that cannot stand in it as sent (under a value set already, over a container
        deeper paths made, or in a container of the other kind) adds to `problems`."""
        root: dict[str, Any] = {}
        values = self.values
        for path, (is_string, value) in values.items():
            if not _assign(root, path, "".join(value) if is_string else value, values):
                self.problems.append(
                    f"jsonPath {_path_text(path)!r} clashes with another path of the arguments"
                    " (a member under a value, or a value over members): one of them is lost"
                )
        return root

    def _write(
        self,
        path: tuple[str | int, ...],
        kind: str,
        value: Any,
        continues: bool,
        appending: bool,
    ) -> str:
        if appending:
            return _escape(value) + ("" if continues else '"')
        out: list[str] = []
        if self._string is not None:
            out.append('"')
        if not self._enter(path, out):
            self.live = False
            return ""
        if kind == "string":
            out.append('"' + _escape(value) + ("" if continues else '"'))
        else:
            out.append(_JSON.encode(value))
        return "".join(out)

    def _enter(self, path: tuple[str | int, ...], out: list[str]) -> bool:
        """Close containers the path leaves, open the ones it enters, and write its member key."""
        if not self._open:
            if not isinstance(path[0], str):
                return False
            self._open = True
            self._push("{", out)
        containers = path[:-1]
        common = 0
        while (
            common < len(self._keys)
            and common < len(containers)
            and self._keys[common] == containers[common]
        ):
            common += 1
        while len(self._keys) > common:
            out.append("}" if self._kinds.pop() == "{" else "]")
            self._keys.pop()
            self._counts.pop()
            self._seen.pop()
        for depth in range(common, len(containers)):
            if not self._member(containers[depth], out):
                return False
            self._keys.append(containers[depth])
            self._push("[" if isinstance(path[depth + 1], int) else "{", out)
        return self._member(path[-1], out)

    def _push(self, kind: str, out: list[str]) -> None:
        out.append(kind)
        self._kinds.append(kind)
        self._counts.append(0)
        self._seen.append(set())

    def _member(self, key: str | int, out: list[str]) -> bool:
        count = self._counts[-1]
        if self._kinds[-1] == "{":
            if not isinstance(key, str) or key in self._seen[-1]:
                return False
            self._seen[-1].add(key)
            out.append(("," if count else "") + _JSON.encode(key) + ":")
            self._counts[-1] = count + 1
            return True
        if not isinstance(key, int) or key < count:
            return False
        while count < key:
            # Skipped array slots read as null in the object too.
            out.append(("," if count else "") + "null")
            count += 1
        out.append("," if count else "")
        self._counts[-1] = count + 1
        return True


def _entry_value(entry: dict[str, Any]) -> tuple[str | None, Any]:
    """The entry's kind ("string" or "value") and value; kind None when it carries none of the value keys."""
    for key in _VALUE_KEYS:
        if key in entry:
            if key == "stringValue":
                return "string", str(entry[key])
            return "value", None if key == "nullValue" else entry[key]
    return None, None


def _escape(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return text  # most fragments are plain words: nothing to escape
    return _JSON.encode(text)[1:-1]


def _assign(
    root: dict[str, Any],
    path: tuple[str | int, ...],
    value: Any,
    values: dict[tuple[str | int, ...], list[Any]],
) -> bool:
    """Set the value at its path; False when it cannot stand there as sent (it is dropped, or it replaces what
    another path set)."""
    node: Any = root
    for depth, key in enumerate(path):
        last = depth == len(path) - 1
        child: Any = value if last else ([] if isinstance(path[depth + 1], int) else {})
        if isinstance(key, int):
            if not isinstance(node, list):
                return False
            node.extend([None] * (key + 1 - len(node)))
            held = node[key]
            if last:
                node[key] = child
                # A null there is a skipped slot; anything else came from deeper paths.
                return held is None
            if held is None:
                if path[: depth + 1] in values:
                    return False  # a null sent for this item, which the members would replace
                node[key] = child
            node = node[key]
        else:
            if not isinstance(node, dict):
                return False
            if last:
                clash = key in node
                node[key] = child
                return not clash
            node = node.setdefault(key, child)
    return True


def _path_text(path: tuple[str | int, ...]) -> str:
    """A parsed path written back as a JSON path, for a note."""
    return "$" + "".join(
        f"[{key}]"
        if isinstance(key, int)
        else (f".{key}" if _member_token("." + key) == key else f"[{json.dumps(key)}]")
        for key in path
    )
