# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini generateContent: codec, contents, tool definitions, short path, detection and stream state."""
