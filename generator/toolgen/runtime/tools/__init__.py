# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The tool registry: handlers bound to typed tool entries, and dispatch that never raises."""
