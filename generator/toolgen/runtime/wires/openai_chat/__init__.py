# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Chat Completions and its dialects (Mistral, camelCase): codec, messages, parts, detection, stream state."""
