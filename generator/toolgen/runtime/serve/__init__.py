# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Durable runs over HTTP: the loop as a DBOS workflow, its events kept for replay, the service and its page."""
