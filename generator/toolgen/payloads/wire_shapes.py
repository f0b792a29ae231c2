"""The shapes provider wires document for their bodies, checked where the codecs are lenient: every content block.

A wire's decoder keeps what it cannot map (a block of a kind canonical content has no place for, or a block of a
known kind missing what it needs) as it was, so that a body round-trips; `toolgen validate` must still say when
a recorded body is not one the provider documents: an Anthropic image block without `data`, a Gemini
`inlineData` without `mimeType`, a Bedrock `toolResult` without `toolUseId`. The shapes themselves, one table
per wire, and `shape_problems`, which checks a body against its wire's, are in wire_shape_specs.py; here is the
small checker that walks a body along a shape.

A shape names only what the wire documents: keys it does not know are left alone, and a block of a kind it does
not list is left to the decoder (providers add kinds often). Each problem is a JSON pointer into the body and a
sentence, `expected <what>, got <value>`. The walk follows the shape, so a body costs at most one visit of each
value the shape names; it goes as deep as the body only where blocks hold blocks, which the parse bounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Problems = list[tuple[str, str]]
# Longest value a sentence quotes, as the runtime's sentences cut them.
_SHOWN = 60


def sentence(what: str, value: Any) -> str:
    """`expected <what>, got <value>`, the shape of every validation problem (runtime/schema/sentences.py)."""
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=repr)
    elif isinstance(value, str):
        text = json.dumps(value[: _SHOWN + 1], ensure_ascii=False)
    else:
        text = json.dumps(value, default=repr)
    return f"expected {what}, got {text if len(text) <= _SHOWN else text[: _SHOWN - 3] + '...'}"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


class Shape:
    """What a value must be; `what` is how sentences name it."""

    what = "a value"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        raise NotImplementedError

    def fail(self, value: Any, pointer: str, out: Problems) -> None:
        out.append((pointer, sentence(self.what, value)))


@dataclass(frozen=True)
class Leaf(Shape):
    """A JSON value of one of some Python types (bool is never a number)."""

    types: tuple[type, ...]
    what: str = "a value"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in self.types):
            self.fail(value, pointer, out)


STRING = Leaf((str,), "a string")
BOOLEAN = Leaf((bool,), "a boolean")
NUMBER = Leaf((int, float), "a number")
OBJECT = Leaf((dict,), "an object")
NULL_OR_STRING = Leaf((str, type(None)), "a string or null")


@dataclass(frozen=True)
class Anything(Shape):
    what: str = "any JSON value"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        return None


ANY = Anything()


@dataclass(frozen=True)
class Enum(Shape):
    values: tuple[str, ...]

    @property
    def what(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if value not in self.values or not isinstance(value, str):
            self.fail(value, pointer, out)


@dataclass(frozen=True)
class Array(Shape):
    items: Shape
    what: str = "an array"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if not isinstance(value, list):
            self.fail(value, pointer, out)
            return
        for index, item in enumerate(value):
            self.items.check(item, f"{pointer}/{index}", out)


@dataclass(frozen=True)
class Either(Shape):
    """One shape by the value's JSON type: a string, or an array of blocks (a content field)."""

    choices: tuple[tuple[tuple[type, ...], Shape], ...]
    what: str = "a value"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        for types, shape in self.choices:
            if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
                shape.check(value, pointer, out)
                return
        self.fail(value, pointer, out)


def either(what: str, *choices: tuple[type | tuple[type, ...], Shape]) -> Either:
    return Either(tuple(((t,) if isinstance(t, type) else t, s) for t, s in choices), what)


def _keys(spelled: str) -> tuple[str, ...]:
    """A key and its other spellings (`mimeType|mime_type`: Gemini takes both)."""
    return tuple(spelled.split("|"))


@dataclass(frozen=True)
class Obj(Shape):
    """An object: keys it must have, keys it may have (each with its shape), and groups of keys of which it
    needs one at least (`file_id`, `file_data` or `file_url`)."""

    required: Mapping[str, Shape] = field(default_factory=dict)
    optional: Mapping[str, Shape] = field(default_factory=dict)
    one_of: tuple[tuple[str, ...], ...] = ()
    what: str = "an object"
    # The keys split into their spellings once: a shape is checked on every record.
    _required: tuple[tuple[tuple[str, ...], Shape], ...] = field(init=False, repr=False, compare=False)
    _optional: tuple[tuple[str, Shape], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_required", tuple((_keys(k), v) for k, v in self.required.items()))
        object.__setattr__(self, "_optional", tuple((key, v) for k, v in self.optional.items() for key in _keys(k)))

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if type(value) is not dict:
            self.fail(value, pointer, out)
            return
        for keys, shape in self._required:
            key = next((k for k in keys if k in value), None)
            if key is None:
                out.append((f"{pointer}/{_escape(keys[0])}", f"expected {shape.what} (it is required), got nothing"))
            else:
                shape.check(value[key], f"{pointer}/{_escape(key)}", out)
        for key, shape in self._optional:
            if key in value:
                shape.check(value[key], f"{pointer}/{_escape(key)}", out)
        for group in self.one_of:
            if not any(key in value for key in group):
                names = ", ".join(f"`{key}`" for key in group)
                out.append((pointer, f"expected one of {names} in this {self.what}, got none of them"))


@dataclass(frozen=True)
class Tagged(Shape):
    """An object whose kind is named by a key (`type`, `role`): each documented kind has its shape.

    `closed`: only the listed kinds exist (an image source's `type`); otherwise other kinds are left alone.
    `default`: the kind of an object without the key (a Responses input message needs no `type`).
    """

    key: str
    kinds: Mapping[str, Shape]
    closed: bool = False
    default: str | None = None
    what: str = "an object"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if not isinstance(value, dict):
            self.fail(value, pointer, out)
            return
        kind = value.get(self.key, self.default)
        if kind is None:
            out.append((f"{pointer}/{_escape(self.key)}", f"expected {self._listed()} (it is required), got nothing"))
            return
        shape = self.kinds.get(kind) if isinstance(kind, str) else None
        if shape is not None:
            shape.check(value, pointer, out)
        elif self.closed or not isinstance(kind, str):
            out.append((f"{pointer}/{_escape(self.key)}", sentence(self._listed(), kind)))

    def _listed(self) -> str:
        names = ", ".join(repr(k) for k in self.kinds)
        return f"one of {names}" if self.closed else f"a string naming its kind ({names}, ...)"


@dataclass(frozen=True)
class Members(Shape):
    """An object that is one of several kinds by the member it holds (a Gemini part's `inlineData`, a Bedrock
    block's `toolUse`): each member present is checked; `needed` means one of them must be there."""

    members: Mapping[str, Shape]
    needed: bool = False
    what: str = "an object"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        if not isinstance(value, dict):
            self.fail(value, pointer, out)
            return
        found = False
        for spelled, shape in self.members.items():
            for key in _keys(spelled):
                if key in value:
                    found = True
                    shape.check(value[key], f"{pointer}/{_escape(key)}", out)
        if self.needed and not found:
            names = ", ".join(f"`{_keys(k)[0]}`" for k in self.members)
            out.append((pointer, f"expected {self.what} holding one of {names}, got none of them"))


@dataclass(frozen=True)
class Lazy(Shape):
    """A shape built on first use: block lists that hold blocks (an Anthropic document's `content`)."""

    build: Callable[[], Shape]
    what: str = "a value"

    def check(self, value: Any, pointer: str, out: Problems) -> None:
        self.build().check(value, pointer, out)
