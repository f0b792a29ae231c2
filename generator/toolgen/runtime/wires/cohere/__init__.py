# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Cohere Chat v2: codec, short path, detection and stream state."""
