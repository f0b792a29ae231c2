"""Policy over tool definitions: lint rules and breaking-change checks."""
