"""toolgen: a schema-first code generator for LLM tool calling; its library verbs, what they return and raise.

Every verb of `toolgen.api` and `toolgen.payloads.verbs` is here, with keyword-only options:
`toolgen.build(root, force=True)`, `toolgen.validate(paths, kind="message", root=root)`,
`toolgen.breaking(against, root=root)`. A name is imported
with its module when first read, so `import toolgen` (and `toolgen --help`) loads neither the pipeline nor
jinja2, jsonschema or datamodel-code-generator.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolgen.api import (
        BuildResult,
        Progress,
        breaking,
        breaking_snapshot,
        build,
        check,
        export,
        init_project,
        lint,
        payload_sources,
        validate,
    )
    from toolgen.core.diagnostics import Diagnostic, Severity
    from toolgen.core.errors import (
        BrokenPackageError,
        ConfigNotFoundError,
        EnvironmentProblem,
        ExitCode,
        ExternalToolError,
        ForeignFilesError,
        ForeignOutputError,
        InvalidInputError,
        LintFailedError,
        ProjectExistsError,
        SdkNotBuiltError,
        ToolgenError,
        UnsafeOutputError,
    )
    from toolgen.output.drift import CheckResult
    from toolgen.payloads.codec import Converted
    from toolgen.payloads.conformance import ConformanceRow
    from toolgen.payloads.validation.local import Source, Tally
    from toolgen.payloads.verbs import conformance, convert, convert_noted, decode, encode, encode_noted
    from toolgen.project.scaffold import InitResult
    from toolgen.runtime import Export, GeminiSchema

# Each public name and the module it lives in.
_HOMES = MappingProxyType(
    {
        **dict.fromkeys(
            (
                "BuildResult",
                "Progress",
                "breaking",
                "breaking_snapshot",
                "build",
                "check",
                "export",
                "init_project",
                "lint",
                "payload_sources",
                "validate",
            ),
            "toolgen.api",
        ),
        **dict.fromkeys(
            ("conformance", "convert", "convert_noted", "decode", "encode", "encode_noted"), "toolgen.payloads.verbs"
        ),
        **dict.fromkeys(("Diagnostic", "Severity"), "toolgen.core.diagnostics"),
        "InitResult": "toolgen.project.scaffold",
        "CheckResult": "toolgen.output.drift",
        **dict.fromkeys(
            (
                "BrokenPackageError",
                "ConfigNotFoundError",
                "EnvironmentProblem",
                "ExitCode",
                "ExternalToolError",
                "ForeignFilesError",
                "ForeignOutputError",
                "InvalidInputError",
                "LintFailedError",
                "ProjectExistsError",
                "SdkNotBuiltError",
                "ToolgenError",
                "UnsafeOutputError",
            ),
            "toolgen.core.errors",
        ),
        "ConformanceRow": "toolgen.payloads.conformance",
        "Converted": "toolgen.payloads.codec",
        **dict.fromkeys(("Export", "GeminiSchema"), "toolgen.runtime"),
        **dict.fromkeys(("Source", "Tally"), "toolgen.payloads.validation.local"),
    }
)

__all__ = [
    "BrokenPackageError",
    "BuildResult",
    "CheckResult",
    "ConfigNotFoundError",
    "ConformanceRow",
    "Converted",
    "Diagnostic",
    "EnvironmentProblem",
    "ExitCode",
    "Export",
    "ExternalToolError",
    "ForeignFilesError",
    "ForeignOutputError",
    "GeminiSchema",
    "InitResult",
    "InvalidInputError",
    "LintFailedError",
    "Progress",
    "ProjectExistsError",
    "SdkNotBuiltError",
    "Severity",
    "Source",
    "Tally",
    "ToolgenError",
    "UnsafeOutputError",
    "breaking",
    "breaking_snapshot",
    "build",
    "check",
    "conformance",
    "convert",
    "convert_noted",
    "decode",
    "encode",
    "encode_noted",
    "export",
    "init_project",
    "lint",
    "payload_sources",
    "validate",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
