# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Canonical requests and responses, the table of wires, and one sub-package per wire (codec, detection, stream)."""
