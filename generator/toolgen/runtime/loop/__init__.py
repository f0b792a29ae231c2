# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The agent loop: its state machine, a sync and an async driver, options, policies, results and events."""
