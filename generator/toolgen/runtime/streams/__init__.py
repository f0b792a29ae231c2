# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream framing, one stream state per wire, and the aggregator that turns chunks into events."""
