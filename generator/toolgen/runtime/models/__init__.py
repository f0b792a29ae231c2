# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Pydantic bases of the generated models, and validation with its errors."""
