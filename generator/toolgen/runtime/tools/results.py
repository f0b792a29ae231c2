# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A tool's result as the text the model reads: the default converter, which refuses what JSON cannot hold."""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic


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
    """Text sent back to the model: a string as it is, a model or other value as JSON."""
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
