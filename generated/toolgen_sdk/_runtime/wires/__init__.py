# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Canonical requests and responses, one codec per provider wire format, and the table of wires."""
