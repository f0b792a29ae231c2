# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The offline demo: sandboxed demo handlers and a scripted model."""
