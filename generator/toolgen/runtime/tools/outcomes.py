# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a tool call gives back: its outcome or error, content parts, and a result as the text the model reads."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
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
    JSON."""
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
    # NaN and Infinity are not JSON: such a result is an error the model is told about, not invalid JSON.
    return json.dumps(result, ensure_ascii=False, default=str, allow_nan=False)


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
