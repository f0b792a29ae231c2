# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Anthropic Messages: codec, message mapping, short path, detection and stream state."""
