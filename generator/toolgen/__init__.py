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

# The public surface, listed once: each module and the names it gives. `__all__` and the lazy lookup are made
# from it; the imports below, for type checkers only, are held to it by tests/architecture/test_surface.py.
_SURFACE: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "toolgen.api": (
            "ArgumentError",
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
        "toolgen.core.diagnostics": (
            "Diagnostic",
            "Severity",
        ),
        "toolgen.core.errors": (
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
        "toolgen.importing.definitions": ("Imported",),
        "toolgen.output.build_stages": ("BuildResult",),
        "toolgen.output.drift": ("CheckResult",),
        "toolgen.payloads.codec": ("Converted",),
        "toolgen.payloads.conformance": ("ConformanceRow",),
        "toolgen.payloads.validation.cluster": ("ClusterAddress",),
        "toolgen.payloads.validation.local": (
            "Source",
            "Tally",
        ),
        "toolgen.payloads.validation.summary": ("Summary",),
        "toolgen.project.mcp_pins": ("DriftReport",),
        "toolgen.project.scaffold": ("InitResult",),
        "toolgen.runtime": (
            "Export",
            "GeminiSchema",
        ),
    }
)
_HOMES = MappingProxyType({name: module for module, names in _SURFACE.items() for name in names})
__all__ = sorted(_HOMES)

if TYPE_CHECKING:
    from toolgen.api import ArgumentError as ArgumentError
    from toolgen.api import Progress as Progress
    from toolgen.api import breaking as breaking
    from toolgen.api import breaking_snapshot as breaking_snapshot
    from toolgen.api import build as build
    from toolgen.api import check as check
    from toolgen.api import check_mcp_lock as check_mcp_lock
    from toolgen.api import conformance as conformance
    from toolgen.api import convert as convert
    from toolgen.api import convert_noted as convert_noted
    from toolgen.api import decode as decode
    from toolgen.api import did_you_mean as did_you_mean
    from toolgen.api import encode as encode
    from toolgen.api import encode_noted as encode_noted
    from toolgen.api import export as export
    from toolgen.api import import_tools as import_tools
    from toolgen.api import init_project as init_project
    from toolgen.api import lint as lint
    from toolgen.api import parse_dask_address as parse_dask_address
    from toolgen.api import payload_sources as payload_sources
    from toolgen.api import validate as validate
    from toolgen.core.diagnostics import Diagnostic as Diagnostic
    from toolgen.core.diagnostics import Severity as Severity
    from toolgen.core.errors import BrokenPackageError as BrokenPackageError
    from toolgen.core.errors import ConfigNotFoundError as ConfigNotFoundError
    from toolgen.core.errors import EnvironmentProblem as EnvironmentProblem
    from toolgen.core.errors import ExitCode as ExitCode
    from toolgen.core.errors import ExternalToolError as ExternalToolError
    from toolgen.core.errors import ForeignFilesError as ForeignFilesError
    from toolgen.core.errors import ForeignOutputError as ForeignOutputError
    from toolgen.core.errors import InvalidInputError as InvalidInputError
    from toolgen.core.errors import LintFailedError as LintFailedError
    from toolgen.core.errors import ProjectExistsError as ProjectExistsError
    from toolgen.core.errors import SdkNotBuiltError as SdkNotBuiltError
    from toolgen.core.errors import ToolgenError as ToolgenError
    from toolgen.core.errors import UnsafeOutputError as UnsafeOutputError
    from toolgen.importing.definitions import Imported as Imported
    from toolgen.output.build_stages import BuildResult as BuildResult
    from toolgen.output.drift import CheckResult as CheckResult
    from toolgen.payloads.codec import Converted as Converted
    from toolgen.payloads.conformance import ConformanceRow as ConformanceRow
    from toolgen.payloads.validation.cluster import ClusterAddress as ClusterAddress
    from toolgen.payloads.validation.local import Source as Source
    from toolgen.payloads.validation.local import Tally as Tally
    from toolgen.payloads.validation.summary import Summary as Summary
    from toolgen.project.mcp_pins import DriftReport as DriftReport
    from toolgen.project.scaffold import InitResult as InitResult
    from toolgen.runtime import Export as Export
    from toolgen.runtime import GeminiSchema as GeminiSchema


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
