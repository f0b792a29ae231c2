# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream framing, events, the stream-state base and the aggregator; each wire's state is in wires/<wire>/stream.py."""
