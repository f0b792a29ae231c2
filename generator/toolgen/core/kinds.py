"""What the payload verbs accept (`validate --as`, `decode --kind`): names only, so listing them loads nothing."""

from __future__ import annotations

from types import MappingProxyType

from toolgen.runtime import WIRES

# What `--as` accepts, and the generated validator that checks it.
KINDS = MappingProxyType(
    {
        "message": "validate_message",
        "messages": "validate_messages",
        "tool-call": "validate_tool_call",
        "tool-definition": "validate_tool_definition",
        "usage": "validate_usage",
    }
)
# A provider body: `<wire>.request` or `<wire>.response`, decoded with the SDK's adapters first.
WIRE_KINDS = tuple(f"{wire}.{kind}" for wire in WIRES for kind in ("request", "response"))
# What a recorded payload file holds (`decode`, `convert`).
PAYLOAD_KINDS = ("request", "response", "stream")
