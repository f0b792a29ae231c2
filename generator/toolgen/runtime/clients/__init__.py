# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Model clients for the agent loop: the protocol and base (base), scripted and replayed (scripted), HTTP (http)."""
