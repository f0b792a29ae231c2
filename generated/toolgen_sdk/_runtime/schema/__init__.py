# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""JSON Schema helpers the rest of the runtime shares: subschema keywords, ECMA patterns, provider fits."""
