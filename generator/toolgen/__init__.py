"""toolgen: a schema-first code generator for LLM tool calling; its library verbs, what they return and raise.

Every verb of `toolgen.api` and `toolgen.payload_api` is here, with keyword-only options:
`toolgen.build(root, force=True)`, `toolgen.validate(paths, kind="message", root=root)`,
`toolgen.breaking(against, root=root)`. A name is imported
with its module when first read, so `import toolgen` (and `toolgen --help`) loads neither the pipeline nor
jinja2, jsonschema or datamodel-code-generator.
"""

from __future__ import annotations

import importlib
import sys
from types import MappingProxyType, ModuleType
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
    from toolgen.conformance import ConformanceRow
    from toolgen.diagnostics import Diagnostic, Severity
    from toolgen.drift import CheckResult
    from toolgen.errors import (
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
    from toolgen.payload_api import conformance, convert, convert_noted, decode, encode, encode_noted
    from toolgen.payloads import Converted
    from toolgen.runtime import Export, GeminiSchema
    from toolgen.scaffold import InitResult
    from toolgen.validate import Source, Tally

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
            ("conformance", "convert", "convert_noted", "decode", "encode", "encode_noted"), "toolgen.payload_api"
        ),
        **dict.fromkeys(("Diagnostic", "Severity"), "toolgen.diagnostics"),
        "InitResult": "toolgen.scaffold",
        "CheckResult": "toolgen.drift",
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
            "toolgen.errors",
        ),
        "ConformanceRow": "toolgen.conformance",
        "Converted": "toolgen.payloads",
        **dict.fromkeys(("Export", "GeminiSchema"), "toolgen.runtime"),
        **dict.fromkeys(("Source", "Tally"), "toolgen.validate"),
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


class _Surface(ModuleType):
    """This package, whose verbs keep their names when a stage module of the same name is imported.

    Importing a submodule binds it on its package under its own name, and two stage modules, `toolgen.lint` and
    `toolgen.validate`, are named like the verbs that run them: without this, `toolgen.validate` would be the
    function or the module depending on what was imported first. The modules are still what
    `from toolgen.validate import Tally` and `importlib.import_module("toolgen.validate")` give.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Surface
