"""Where a decoded provider body's canonical values were in the body: canonical pointers turned into body pointers.

The wire codecs share their strings with the body they decode (nothing is copied), so a canonical call's name,
id and string arguments, or a tool message's call id, are the very objects found in the body: identity tells
where each came from, on every wire, without knowing its layout. A body read by `json.loads` (as `parse_json`
reads it) holds a new string object for every string value, except the one-character and empty ones Python
shares, which are known by their value when the body holds it once. A call whose arguments the wire sends as an object (and a
generated call id) has no string of its own there: it is found next to its name.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

# Where a wire keeps a call's arguments next to its name, tried in this order; the wire's own key when none is
# there (a Gemini call without arguments sends no `args`).
_ARGUMENT_KEYS = ("arguments", "input", "args")
_DEFAULT_ARGUMENTS = {"anthropic": "input", "bedrock-converse": "input", "gemini": "args"}
# Anchors looked at to find the object a canonical value's strings share in the body.
_MOST_SHARED = 64
# Canonical keys whose one-character values are looked up by value.
_SHORT_KEYS = frozenset({"id", "tool_call_id", "name"})
# The keys a wire spells a call's id or a result's call id with.
_ID_KEYS = ("id", "call_id", "toolUseId", "toolCallId", "tool_call_id", "tool_use_id")


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def tokens(pointer: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]] if pointer else []


def _parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def strings_of(value: Any, pointer: str, skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, Any]]:
    """(pointer, string) for every string value, in document order, without recursion (depth is bounded by the
    parse, not by Python's stack)."""
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        at, current = stack.pop()
        if isinstance(current, str):
            yield at, current
        elif isinstance(current, dict):
            stack.extend((f"{at}/{escape(str(k))}", v) for k, v in reversed(current.items()) if k not in skip)
        elif isinstance(current, list):
            stack.extend((f"{at}/{i}", v) for i, v in reversed(list(enumerate(current))))


def resolve(body: Any, pointer: str) -> Any:
    """The value at `pointer` in `body`, or None."""
    current = body
    for token in tokens(pointer):
        if isinstance(current, dict):
            current = current.get(token)
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
    return current


class BodyPlaces:
    """Canonical pointers of a decoded body's messages (`/<message>/...`) as pointers into the body itself."""

    def __init__(self, body: Any, messages: list[Any], wire: str) -> None:
        self.body = body
        self.messages = messages
        self.wire = wire
        strings: dict[int, str | None] = {}
        # Python shares empty and one-character strings: those are known by their value, when it is in one place.
        short: dict[str, str | None] = {}
        for pointer, value in strings_of(body, ""):
            if len(value) > 1:
                # A second place for one object (never from json.loads, but a body built by hand may share one).
                strings[id(value)] = None if id(value) in strings else pointer
            else:
                short[value] = None if value in short else pointer
        self._anchors: dict[str, str] = {}
        for index, message in enumerate(messages):
            # `extras` keeps body blocks as they were: anchors there would name no canonical value.
            for pointer, value in strings_of(message, f"/{index}", frozenset({"extras"})):
                if len(value) > 1:
                    found = strings.get(id(value))
                else:  # a decoder may write an empty string of its own; ids and names it only passes on
                    found = short.get(value) if value and pointer.rsplit("/", 1)[-1] in _SHORT_KEYS else None
                if found is not None:
                    self._anchors[pointer] = found
        self._sorted = sorted(self._anchors)

    def place(self, pointer: str) -> tuple[str, str | None] | None:
        """(body pointer, pointer of the JSON string it continues into, else None) for a canonical pointer, or
        None when nothing of the body can be tied to it."""
        parts = tokens(pointer)
        if not parts or not parts[0].isdigit() or int(parts[0]) >= len(self.messages):
            return None
        index = int(parts[0])
        if len(parts) >= 3 and parts[1] == "tool_calls" and parts[2].isdigit():
            return self._call_place(index, int(parts[2]), parts[3:])
        message = self.messages[index]
        if isinstance(message, dict) and message.get("role") == "tool":
            found = self._result_place(index, parts[1:])
            if found is not None:
                return found
        return self._nearest(pointer)

    def call(self, index: int, number: int) -> str | None:
        """The body pointer of the object holding canonical call `number` of message `index`."""
        at = f"/{index}/tool_calls/{number}"
        by_id = self._anchors.get(f"{at}/id")
        if by_id is not None:
            return _parent(by_id)
        name = self._anchors.get(f"{at}/function/name")
        if name is None:
            return None
        holder = _parent(name)
        # Chat-completions wires keep the name in the call's `function`; the call is the object around it.
        return _parent(holder) if holder.endswith("/function") else holder

    def _call_place(self, index: int, number: int, rest: list[str]) -> tuple[str, str | None] | None:
        at = f"/{index}/tool_calls/{number}"
        if rest[:2] == ["function", "arguments"]:
            found = self._arguments(at)
            if found is not None:
                inner = "".join(f"/{escape(token)}" for token in rest[2:])
                string_pointer, is_string = found
                return string_pointer + inner, string_pointer if is_string else None
        exact = self._anchors.get(at + "".join(f"/{escape(token)}" for token in rest))
        if exact is not None:
            return exact, None
        holder = self.call(index, number)
        if holder is None:
            return None
        if rest == ["id"]:
            return self._key_of(holder, _ID_KEYS), None
        return holder, None

    def _arguments(self, at: str) -> tuple[str, bool] | None:
        """Where a call's arguments are, and whether they are a string there (JSON text) or the value itself."""
        anchored = self._anchors.get(f"{at}/function/arguments")
        if anchored is not None:
            return anchored, True
        name = self._anchors.get(f"{at}/function/name")
        if name is None:
            return None
        holder = _parent(name)
        found = resolve(self.body, holder)
        if not isinstance(found, dict):
            return None
        key = next((k for k in _ARGUMENT_KEYS if k in found), _DEFAULT_ARGUMENTS.get(self.wire, "arguments"))
        return f"{holder}/{escape(key)}", isinstance(found.get(key), str)

    def _result_place(self, index: int, rest: list[str]) -> tuple[str, str | None] | None:
        """A tool message: its call id where the body has it, else the result object holding its name."""
        by_id = self._anchors.get(f"/{index}/tool_call_id")
        if by_id is not None:
            return (by_id if rest == ["tool_call_id"] else _parent(by_id)), None
        name = self._anchors.get(f"/{index}/name")
        if name is not None:
            holder = _parent(name)
            return (self._key_of(holder, _ID_KEYS) if rest == ["tool_call_id"] else holder), None
        return None

    def _key_of(self, holder: str, keys: tuple[str, ...]) -> str:
        found = resolve(self.body, holder)
        if isinstance(found, dict):
            for key in keys:
                if key in found:
                    return f"{holder}/{escape(key)}"
        return holder

    def _nearest(self, pointer: str) -> tuple[str, str | None] | None:
        """The nearest canonical ancestor holding anchored strings: the body object they share."""
        exact = self._anchors.get(pointer)
        if exact is not None:
            return exact, None
        current = pointer
        while current.count("/") >= 1:
            inside = self._inside(current + "/")
            if inside:
                if len(inside) == 1:
                    return _parent(inside[0]), None
                shared = tokens(inside[0])
                for other in inside[1:]:
                    theirs = tokens(other)
                    length = 0
                    while length < min(len(shared), len(theirs)) and shared[length] == theirs[length]:
                        length += 1
                    shared = shared[:length]
                return "".join(f"/{escape(token)}" for token in shared), None
            current = _parent(current)
        return None

    def _inside(self, prefix: str) -> list[str]:
        """Body pointers of the first anchors whose canonical pointer starts with `prefix`."""
        found: list[str] = []
        start = bisect.bisect_left(self._sorted, prefix)
        for canonical in self._sorted[start : start + _MOST_SHARED]:
            if not canonical.startswith(prefix):
                break
            found.append(self._anchors[canonical])
        return found
