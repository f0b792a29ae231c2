"""toolgen: a schema-first code generator for LLM tool calling; its library verbs, what they return and raise.

Every verb of `toolgen.api` is here, with keyword-only options:
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
        Progress,
        breaking,
        breaking_snapshot,
        build,
        check,
        check_mcp_lock,
        conformance,
        convert,
        convert_noted,
        decode,
        did_you_mean,
        encode,
        encode_noted,
        export,
        import_tools,
        init_project,
        lint,
        parse_dask_address,
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
    from toolgen.importing.definitions import Imported
    from toolgen.output.build_stages import BuildResult
    from toolgen.output.drift import CheckResult
    from toolgen.payloads.codec import Converted
    from toolgen.payloads.conformance import ConformanceRow
    from toolgen.payloads.validation.cluster import ClusterAddress
    from toolgen.payloads.validation.local import Source, Tally
    from toolgen.payloads.validation.summary import Summary
    from toolgen.project.mcp_pins import DriftReport
    from toolgen.project.scaffold import InitResult
    from toolgen.runtime import Export, GeminiSchema

# Each public name and the module it lives in.
_HOMES = MappingProxyType(
    {
        **dict.fromkeys(
            (
                "Progress",
                "breaking",
                "breaking_snapshot",
                "build",
                "check",
                "check_mcp_lock",
                "conformance",
                "convert",
                "convert_noted",
                "decode",
                "did_you_mean",
                "encode",
                "encode_noted",
                "export",
                "import_tools",
                "init_project",
                "lint",
                "parse_dask_address",
                "payload_sources",
                "validate",
            ),
            "toolgen.api",
        ),
        "BuildResult": "toolgen.output.build_stages",
        "ClusterAddress": "toolgen.payloads.validation.cluster",
        "DriftReport": "toolgen.project.mcp_pins",
        "Imported": "toolgen.importing.definitions",
        "Summary": "toolgen.payloads.validation.summary",
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
    "ClusterAddress",
    "ConfigNotFoundError",
    "ConformanceRow",
    "Converted",
    "Diagnostic",
    "DriftReport",
    "EnvironmentProblem",
    "ExitCode",
    "Export",
    "ExternalToolError",
    "ForeignFilesError",
    "ForeignOutputError",
    "GeminiSchema",
    "Imported",
    "InitResult",
    "InvalidInputError",
    "LintFailedError",
    "Progress",
    "ProjectExistsError",
    "SdkNotBuiltError",
    "Severity",
    "Source",
    "Summary",
    "Tally",
    "ToolgenError",
    "UnsafeOutputError",
    "breaking",
    "breaking_snapshot",
    "build",
    "check",
    "check_mcp_lock",
    "conformance",
    "convert",
    "convert_noted",
    "decode",
    "did_you_mean",
    "encode",
    "encode_noted",
    "export",
    "import_tools",
    "init_project",
    "lint",
    "parse_dask_address",
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
