"""The exception tree of toolgen; every error carries the CLI exit code it maps to.

    ToolgenError (4)             base class; anything unexpected is an internal error
    ├── InvalidInputError (3)    schemas or config failed to load, validate or resolve; carries diagnostics
    │   └── ForeignFilesError (3)  the package holds files toolgen did not write outside the user zone; one each
    ├── ConfigNotFoundError (3)  no toolgen.yaml where one was expected
    ├── ProjectExistsError (3)   `init` would overwrite an existing project
    ├── ForeignOutputError (3)   the output directory holds files toolgen did not write
    ├── ExternalToolError (4)    a tool toolgen drives (ruff, datamodel-codegen) failed or is missing
    └── UnsafeOutputError (4)    generated code holds a statement no schema should produce; nothing is written

Findings (drift, lint, breaking changes) are results, not exceptions: they exit 1 through the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolgen.diagnostics import Diagnostic, normalized


class ToolgenError(Exception):
    exit_code = 4


class InvalidInputError(ToolgenError):
    exit_code = 3

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = normalized(diagnostics)
        count = len(self.diagnostics)
        super().__init__(f"{count} error{'s' if count != 1 else ''} in the input")


class ConfigNotFoundError(ToolgenError):
    exit_code = 3


class ExternalToolError(ToolgenError):
    exit_code = 4


class ProjectExistsError(ToolgenError):
    exit_code = 3


class UnsafeOutputError(ToolgenError):
    exit_code = 4


class ForeignOutputError(ToolgenError):
    exit_code = 3


class ForeignFilesError(InvalidInputError):
    """Files in a package toolgen writes (or removes) that it did not write and the user zone does not hold."""

    def __init__(self, diagnostics: Iterable[Diagnostic], summary: str | None = None) -> None:
        super().__init__(diagnostics)
        count = len(self.diagnostics)
        self.args = (summary or f"{count} file{'s' if count != 1 else ''} in the package that toolgen did not write",)
