# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Google Interactions: codec, steps, short path, detection and stream state."""
