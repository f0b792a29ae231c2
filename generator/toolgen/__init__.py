"""toolgen: a schema-first code generator for LLM tool calling."""

from toolgen.api import BuildResult, CheckResult, build, check, init_project
from toolgen.diagnostics import Diagnostic, Severity
from toolgen.errors import InvalidInputError, ToolgenError

__all__ = [
    "BuildResult",
    "CheckResult",
    "Diagnostic",
    "InvalidInputError",
    "Severity",
    "ToolgenError",
    "build",
    "check",
    "init_project",
]
