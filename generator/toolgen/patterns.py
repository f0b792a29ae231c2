"""Regular expressions in schemas must compile with Python's re, which the generated models use to check them."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

from toolgen.positions import Pointer
from toolgen.schemawalk import walk


def _problem(pattern: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as error:
        return f"pattern {pattern!r} is not a regular expression Python can run: {error}"
    except (RecursionError, OverflowError) as error:
        return f"pattern {pattern!r} is too complex: {error}"
    return None


def unsupported_patterns(schema: Any) -> Iterator[tuple[Pointer, str]]:
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        pattern = sub.get("pattern")
        if isinstance(pattern, str):
            problem = _problem(pattern)
            if problem:
                yield (*pointer, "pattern"), problem
        keyed = sub.get("patternProperties")
        if isinstance(keyed, dict):
            for key in keyed:
                problem = _problem(key)
                if problem:
                    yield (*pointer, "patternProperties", key), problem
