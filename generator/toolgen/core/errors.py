"""The exception tree of toolgen and the exit codes of its command line; every error carries the code it maps to.

    ToolgenError (INTERNAL 4)                  base class; anything unexpected is an internal error
    ├── InvalidInputError (INVALID_INPUT 3)    schemas or config failed to load, validate or resolve; carries diagnostics
    │   ├── ForeignFilesError (INVALID_INPUT 3)  files in the package toolgen did not write, outside the user zone
    │   └── LintFailedError (FINDINGS 1)     `build` or `check` found a lint error for a provider the project targets
    ├── ConfigNotFoundError (INVALID_INPUT 3)  no toolgen.yaml where one was expected
    ├── ProjectExistsError (INVALID_INPUT 3)   `init` would overwrite an existing project
    ├── ForeignOutputError (INVALID_INPUT 3)   the output directory holds files toolgen did not write
    ├── SdkNotBuiltError (INVALID_INPUT 3)     `validate` found no generated package to check with, or it does not import
    ├── ExternalToolError (INTERNAL 4)         a tool toolgen drives (ruff, datamodel-codegen) failed or is missing
    ├── EnvironmentProblem (INTERNAL 4)        the machine refused a read or write (read-only, full disk, permissions);
    │                                          names the path and what to do, not a bug in toolgen
    ├── BrokenPackageError (INTERNAL 4)        the package a build made does not import; nothing is written
    └── UnsafeOutputError (INTERNAL 4)         generated code holds a statement no schema should produce; nothing is written

Findings (drift, lint, breaking changes) are results, not exceptions: they exit FINDINGS (1) through the CLI.
USAGE (2) is click's, for arguments it refuses; INTERRUPTED (130) is Ctrl-C (InterruptedAfterCommit when it came
once the new package was committed, which is then written in full).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import ClassVar

from toolgen.core.diagnostics import Diagnostic, normalized


class ExitCode(enum.IntEnum):
    """What the `toolgen` command's exit status means; the same numbers whatever the verb."""

    OK = 0
    FINDINGS = 1  # the input is fine and a policy failed: drift, lint, a breaking change, failed conformance
    USAGE = 2  # click's own code for arguments it refuses
    INVALID_INPUT = 3
    INTERNAL = 4  # a bug in toolgen, or the environment (a missing tool, an unwritable disk)
    INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class ToolgenError(Exception):
    exit_code: ClassVar[ExitCode] = ExitCode.INTERNAL


class InvalidInputError(ToolgenError):
    exit_code = ExitCode.INVALID_INPUT

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = normalized(diagnostics)
        count = len(self.diagnostics)
        super().__init__(f"{count} error{'s' if count != 1 else ''} in the input")


class ConfigNotFoundError(ToolgenError):
    exit_code = ExitCode.INVALID_INPUT


class ExternalToolError(ToolgenError):
    exit_code = ExitCode.INTERNAL


class ProjectExistsError(ToolgenError):
    exit_code = ExitCode.INVALID_INPUT


class UnsafeOutputError(ToolgenError):
    exit_code = ExitCode.INTERNAL


class ForeignOutputError(ToolgenError):
    exit_code = ExitCode.INVALID_INPUT


class SdkNotBuiltError(ToolgenError):
    """The generated package to validate with is missing or does not import."""

    exit_code = ExitCode.INVALID_INPUT


class ForeignFilesError(InvalidInputError):
    """Files in a package toolgen writes (or removes) that it did not write and the user zone does not hold."""

    def __init__(self, diagnostics: Iterable[Diagnostic], summary: str | None = None) -> None:
        super().__init__(diagnostics)
        count = len(self.diagnostics)
        self.args = (summary or f"{count} file{'s' if count != 1 else ''} in the package that toolgen did not write",)


class LintFailedError(InvalidInputError):
    """A tool breaks a rule of a provider the project targets (build_lint.py): a finding, as `toolgen lint` has it,
    so it exits 1; the diagnostics are the rules' errors."""

    exit_code = ExitCode.FINDINGS

    def __init__(self, diagnostics: Iterable[Diagnostic], summary: str) -> None:
        super().__init__(diagnostics)
        self.args = (summary,)

    def __reduce__(self) -> tuple[type[LintFailedError], tuple[tuple[Diagnostic, ...], str]]:
        # Rebuilt from both arguments: a worker process's build failing so reaches its parent intact.
        return type(self), (self.diagnostics, str(self.args[0]))


class EnvironmentProblem(ToolgenError):
    """The file system refused what a build needs (EACCES, EROFS, ENOSPC, ...); the message names the path."""

    exit_code = ExitCode.INTERNAL


class BrokenPackageError(ToolgenError):
    """The staged package does not import: a bug in toolgen, caught before the commit point."""

    exit_code = ExitCode.INTERNAL


class InterruptedAfterCommit(KeyboardInterrupt):
    """Ctrl-C that came past a build's commit point: the new package was written in full before it was raised."""
