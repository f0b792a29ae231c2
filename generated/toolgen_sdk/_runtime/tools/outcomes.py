# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a tool call gives back: its outcome or error, content parts, and a result as the text the model reads."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic

from ..models.problems import ValidationProblem

ErrorKind = Literal[
    "unknown_tool",
    "invalid_json",
    "invalid_arguments",
    "unbound",
    "handler_error",
    "timeout",
    "invalid_result",
    "approval_required",
]


# A tool's result as what the model reads: the default converter refuses what JSON cannot hold.


@dataclass(frozen=True)
class ContentParts:
    """A handler's result as canonical content parts (text, image, audio, file), sent to the model as they are.

    `value` is the data the parts stand for, when there is such (an MCP tool's structuredContent): a served
    tool's structured result is made of it. Return it from a handler; no converter is needed. A tool whose
    result is checked against its output schema returns its data instead, and a `result_converter` makes the
    parts."""

    parts: Sequence[Mapping[str, Any]]
    value: Any = None


def _non_finite(value: Any) -> bool:
    """Whether a model's dumped data holds a float NaN or infinity anywhere; walked without recursion."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, float):
            if not math.isfinite(current):
                return True
        elif isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, (list, tuple)):
            stack.extend(current)
    return False


def default_converter(result: Any) -> str | list[Any]:
    """Text sent back to the model: a string as it is, ContentParts as their parts, a model or other value as
    JSON (a value JSON cannot hold, such as a set, as its str(); the registry notes where: json_written)."""
    if isinstance(result, ContentParts):
        return [dict(part) for part in result.parts]
    if isinstance(result, pydantic.RootModel) and isinstance(result.root, str):
        return result.root
    if isinstance(result, str):
        return result
    if isinstance(result, pydantic.BaseModel):
        # pydantic writes NaN and infinity as null, which the tool's output schema never allows: refused, as
        # json.dumps refuses them in any other result.
        if _non_finite(result.model_dump(by_alias=True)):
            raise ValueError("Out of range float values are not JSON compliant")
        return result.model_dump_json(by_alias=True, exclude_none=True)
    return json_written(result)[0]


def json_written(result: Any) -> tuple[str, list[tuple[str, str]]]:
    """`result` as JSON text, and where it held a value JSON cannot (a set, an arbitrary object), written as its
    str() instead: (JSON pointer, type name) of each, so that the run can say so. The walk that finds them is
    made only when there is such a value."""
    texted: list[Any] = []

    def as_text(value: Any) -> str:
        texted.append(value)
        return str(value)

    # NaN and Infinity are not JSON: such a result is an error the model is told about, not invalid JSON.
    text = json.dumps(result, ensure_ascii=False, default=as_text, allow_nan=False)
    return text, (_places_of(result, texted) if texted else [])


def _places_of(value: Any, found: list[Any]) -> list[tuple[str, str]]:
    """Where in `value` (JSON pointers, in document order) the objects of `found` are, with their type names."""
    wanted = {id(item) for item in found}
    return [
        (pointer, type(item).__name__)
        for pointer, item in _found(value, lambda item: id(item) in wanted)
    ]


def surrogate_places(value: Any) -> list[str]:
    """The JSON pointers of the strings in `value` that hold a lone surrogate (`""`: `value` itself is one)."""
    return [pointer for pointer, _ in _found(value, _unencodable)]


def _unencodable(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _found(value: Any, hit: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """The values of `value`'s tree for which `hit` holds, with their JSON pointers, in document order; walked
    without recursion, not into a value found."""
    found: list[tuple[str, Any]] = []
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        current, pointer = stack.pop()
        if hit(current):
            found.append((pointer, current))
        elif isinstance(current, dict):
            stack.extend(
                (item, f"{pointer}/{_escaped(key)}")
                for key, item in reversed(current.items())
            )
        elif isinstance(current, (list, tuple)):
            stack.extend(
                (item, f"{pointer}/{index}")
                for index, item in reversed(list(enumerate(current)))
            )
    return found


def texted_note(name: str, places: list[tuple[str, str]]) -> str:
    """The note for the values of a result written as their str() (json_written's places)."""
    shown = [f"{_article(kind)} {kind}{_at(pointer)}" for pointer, kind in places[:3]]
    if len(places) > 3:
        shown.append(f"{len(places) - 3} more")
    one = len(places) == 1
    return (
        f"{name}'s result: {_listed(shown)} {'was' if one else 'were'} not JSON,"
        f" sent as {'its' if one else 'their'} text"
    )


def plain_data(result: Any) -> Any:
    """A tool's result as plain data: a model as the JSON-shaped dict its aliases name, anything else as it is."""
    if isinstance(result, pydantic.BaseModel):
        return result.model_dump(by_alias=True)
    return result


def surrogate_note(name: str, result: Any) -> str:
    """The note for a result whose text held a lone surrogate (no request can encode one), sent as U+FFFD."""
    places = surrogate_places(plain_data(result))
    # No place: a converter's own text, or a key, with no value of the result to point at.
    if not places:
        return f"{name}'s result: a lone surrogate in its text was sent as U+FFFD"
    if len(places) == 1:
        return f"{name}'s result: a lone surrogate{_at(places[0])} was sent as U+FFFD"
    shown = places[:3] + ([f"{len(places) - 3} more"] if len(places) > 3 else [])
    return f"{name}'s result: lone surrogates at {_listed(shown)} were sent as U+FFFD"


def _at(pointer: str) -> str:
    return f" at {pointer}" if pointer else ""


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _escaped(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class ToolError:
    kind: ErrorKind
    message: str
    problems: tuple[ValidationProblem, ...] = ()


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one tool call, ready to be sent back as a tool message."""

    tool_call_id: str
    name: str
    content: str | list[Any]
    result: Any = None
    error: ToolError | None = None
    # What was sent otherwise than the tool gave it (a lone surrogate replaced, a set written as its text),
    # each a sentence naming the tool; the run makes each a `note` event.
    notes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.error is not None

    def to_message(self) -> dict[str, Any]:
        """A canonical tool message answering the call."""
        message: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "content": self.content,
        }
        if self.is_error:
            message["is_error"] = True
        return message
