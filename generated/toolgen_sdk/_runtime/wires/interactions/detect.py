# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a Google Interactions response or stream payload is recognized: the predicates its table row names.

Its requests take the fields of the Responses API's: `responses/detect.py` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def response(body: Mapping[str, Any]) -> str | None:
    if (
        body.get("object") == "interaction"
        or "steps" in body
        or ("outputs" in body and "status" in body)
    ):
        return "google-interactions"
    return None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "google-interactions" if "event_type" in payload else None
