# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Amazon Bedrock Converse: codec, message mapping, short path, detection and stream state."""
