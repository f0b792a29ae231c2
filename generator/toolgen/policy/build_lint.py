"""The lint `build` and `check` run: the rules of the providers the project targets, on the tools they make.

A tool a provider refuses (a name it does not take, a description longer than it reads) would build into a
package whose requests that provider answers with an error; so an error of these providers' rules stops the build
(nothing is written) and fails `check`, with exit 1 as `toolgen lint` gives it; otherwise their warnings are printed.
The providers are toolgen.yaml's `lint.providers`, else the wires the package carries (`wires:`, default all).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import LintFailedError
from toolgen.project.config import Config

if TYPE_CHECKING:
    from toolgen.ir.lower import Lowered
    from toolgen.ir.model import Tool


def definition(tool: Tool) -> dict[str, Any]:
    """The tool as its canonical definition, what export and lint take."""
    from toolgen.ir.model import thaw
    from toolgen.runtime import canonical_definition

    return canonical_definition(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        inputSchema=thaw(tool.input_schema),
        outputSchema=thaw(tool.output_schema),
        returnDirect=tool.return_direct,
        timeout=tool.timeout,
        requiresApproval=tool.requires_approval,
        strict=tool.strict,
        meta=thaw(tool.meta),
        annotations=thaw(tool.annotations),
        describeMeta=thaw(tool.describe_meta),
    )


def targeted(config: Config) -> tuple[str, ...]:
    """The providers a build lints for: `lint.providers` (`[]`: none), else the wires the package carries."""
    return config.lint_providers if config.lint_providers is not None else config.wires


def lint_lowered(
    config: Config, lowered: Lowered, providers: tuple[str, ...], *, gemini_subset: bool
) -> tuple[Diagnostic, ...]:
    """The findings of `providers`' rules on the lowered project's tools, each at its place in its file."""
    from toolgen.policy.lint import lint

    sources = [(raw, definition(tool)) for (raw, _), tool in zip(lowered.sources, lowered.project.tools, strict=True)]
    return tuple(lint(sources, providers, gemini_subset=gemini_subset, strict=config.export_strict))


def build_lint(config: Config, lowered: Lowered) -> tuple[Diagnostic, ...]:
    """The warnings of the targeted providers' rules; LintFailedError (exit 1) with the errors when there are any."""
    providers = targeted(config)
    if not providers:
        return ()
    findings = lint_lowered(config, lowered, providers, gemini_subset=config.gemini_schema == "openapi")
    errors = [finding for finding in findings if finding.severity is Severity.ERROR]
    if errors:
        where = "lint.providers" if config.lint_providers else "the wires it carries (wires:)"
        raise LintFailedError(
            errors,
            f"{len(errors)} lint error{'s' if len(errors) != 1 else ''} for the providers this project targets, "
            f"from {where}: fix the tools, or name fewer providers in toolgen.yaml",
        )
    return tuple(findings)
