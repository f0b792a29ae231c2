# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""MCP both ways with the official SDK: serve a registry, use a server's tools, read an MCP tools list."""
