# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A server's answer to a call before the model reads it: bounded in size, structuredContent checked, words once.

- A result larger than the connection's `max_result_bytes` (its JSON) is a tool error, not text for the model.
- structuredContent is checked against the tool's output schema with toolgen's bounded validator (listing.py),
  for plain and task calls alike; a mismatch is a tool error naming the places, which the model reads.
- An error's text is the server's own, once: the loop says "Error: " before it, so a leading "Error: " (a toolgen
  server's) or "Error " (the Python SDK's "Error executing tool NAME: ...") is not said a second time.
- A call that ran out of time, on either side of the wire, is told apart from a failing one (`timed_out`).
- A result the SDK's model refuses as a whole (one block of a type it does not know, a text that is a number) is
  read from its JSON instead (`RawResult`): content.py reads each block, and a note stands for one it cannot.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from ..models.check import schema_problems
from ..tools.guards import ToolFailure, cut_text, problem_text
from .sdk import mcp_types

# The largest result (its JSON, in bytes) a connection hands on, unless told otherwise.
DEFAULT_MAX_RESULT_BYTES = 10_000_000
# JSON-RPC's code for a request that timed out (the SDK's own read timeout raises it too).
_REQUEST_TIMEOUT = -32001
_SAID_ALREADY = re.compile(r"\s*(?:error(?:[ \t]*:[ \t]*|[ \t]+))+", re.IGNORECASE)
# How much of a mismatch the model is told: the first places, each cut, then a count of the rest.
_MOST_PLACES = 5


def server_words(text: str) -> str:
    """The server's error text without the "Error" the loop puts before every tool error itself."""
    found = _SAID_ALREADY.match(text)
    return text[found.end() :] if found else text


def timed_out(error: BaseException) -> bool:
    """Whether a failed call ran out of time: this side's deadline, or the peer's JSON-RPC request timeout."""
    if isinstance(error, TimeoutError):
        return True
    code = getattr(getattr(error, "error", None), "code", None)
    return code == _REQUEST_TIMEOUT


@dataclasses.dataclass(frozen=True)
class RawResult:
    """A CallToolResult as its JSON, where the SDK's model refused it: its blocks as sent (content.py reads
    each, or says in a note why it cannot), its structuredContent and isError, and its size in bytes."""

    content: list[Any]
    structured_content: Any
    is_error: bool
    size: int


def _note_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return cut_text(text, 2000)


def read_result(raw: Mapping[str, Any]) -> Any:
    """A tools/call answer (JSON data) as the SDK's CallToolResult, or as a RawResult where the model refuses it."""
    types = mcp_types()
    try:
        return types.CallToolResult.model_validate(raw, by_name=False)
    except ValueError:  # pydantic's ValidationError: read block by block below
        pass
    content = raw.get("content")
    blocks = list(content) if isinstance(content, list) else []
    if content is not None and not isinstance(content, list):
        blocks.append(
            _note_block(
                f"[the result's content is {type(content).__name__}, not a list of MCP content blocks:"
                f" {_shown(content)}]"
            )
        )
    flag = raw.get("isError")
    if flag is not None and not isinstance(flag, bool):
        blocks.append(
            _note_block(
                f"[the result's isError is {_shown(flag)}, not true or false; read as false]"
            )
        )
    size = len(
        json.dumps(raw, ensure_ascii=False, default=str).encode("utf-8", "replace")
    )
    return RawResult(blocks, raw.get("structuredContent"), flag is True, size)


def _size(result: Any) -> int:
    if isinstance(result, RawResult):
        return result.size
    return len(
        result.model_dump_json(by_alias=True, exclude_none=True).encode(
            "utf-8", "replace"
        )
    )


def _words_once(result: Any) -> Any:
    """An error result whose first text block no longer starts with an "Error" the loop says anyway."""
    content = list(result.content)
    for index, block in enumerate(content):
        if isinstance(block, Mapping):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                content[index] = {**block, "text": server_words(block["text"])}
                return dataclasses.replace(result, content=content)
        elif getattr(block, "type", None) == "text":
            content[index] = block.model_copy(update={"text": server_words(block.text)})
            return result.model_copy(update={"content": content})
    return result


def missing_structure(name: str) -> str:
    """What the model hears of a result without structuredContent from a tool with an (object) output schema."""
    return f"Invalid structured content returned by {name}: there is none, though the tool has an output schema"


def _structure_problem(
    name: str, result: Any, check: tuple[Any, bool] | None
) -> str | None:
    """Why the result's structuredContent does not meet the tool's output schema, or None when it does."""
    if check is None:
        return None
    validator, object_schema = check
    structured = result.structured_content
    if structured is None:
        if (
            not object_schema
        ):  # an output schema MCP's field cannot hold comes back as text (serve_mcp)
            return None
        return missing_structure(name)
    problems = schema_problems(validator, structured)
    if not problems:
        return None
    shown = "; ".join(problem_text(p) for p in problems[:_MOST_PLACES])
    left = len(problems) - _MOST_PLACES
    more = f"; and {left} more" if left > 0 else ""
    return cut_text(
        f"Invalid structured content returned by {name}: {shown}{more}", 4000
    )


def output_check(
    validators: Mapping[str, Any], definition: Mapping[str, Any]
) -> tuple[Any, bool] | None:
    """What answered() checks a tool's results with: its output schema's validator, and whether the schema is one
    MCP's own field holds (an object schema, whose results must carry structuredContent)."""
    validator = validators.get(definition["name"])
    if validator is None:
        return None
    schema = definition.get("outputSchema")
    return validator, isinstance(schema, Mapping) and schema.get("type") == "object"


def answered(
    name: str, result: Any, check: tuple[Any, bool] | None, max_bytes: int
) -> Any:
    """The call's result (the SDK's CallToolResult, or the answer's JSON) as the connection hands it on: a
    CallToolResult or RawResult; ToolFailure for one too large or not as its schema says."""
    if isinstance(result, Mapping):
        result = read_result(result)
    size = _size(result)
    if size > max_bytes:
        raise ToolFailure(
            f"the result of {name} is {size:,} bytes, more than the {max_bytes:,} this MCP connection takes"
            " (max_result_bytes)"
        )
    if result.is_error:
        return _words_once(result)
    problem = _structure_problem(name, result, check)
    if problem is not None:
        raise ToolFailure(problem)
    return result
