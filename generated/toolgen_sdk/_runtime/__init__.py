# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The runtime's declared surface: every name the generator and the generated modules use, imported on first use.

Sub-packages by layer, each importing only those below it: schema (JSON Schema helpers), wires (canonical
requests and responses, one codec per wire, the table of wires), models (pydantic bases, validation and its
errors), streams (framing, stream states, the aggregator), tools (the registry), clients (model clients),
observe (OpenTelemetry spans and metrics, a no-op without it), loop (the agent loop and its events), serve
(durable runs on DBOS over HTTP, and their page), mcp (serving and using tools over MCP), app (the package's
command line) and demo (the offline example).
A name is imported with its module when first read, so importing the package costs nothing by itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .surface import HOMES

if TYPE_CHECKING:
    from .app.main import main
    from .clients.auth import Auth, BearerToken, google_token
    from .clients.base import ModelClient, ModelClientBase
    from .clients.http import HTTPModel
    from .clients.presets import PRESETS, Preset, preset_model
    from .clients.recording import Recorder, read_exchanges
    from .clients.retry import RetryPolicy
    from .clients.scripted import ReplayModel, ScriptedModel, assistant_turn, tool_call
    from .clients.sigv4 import SigV4
    from .extras import MissingExtra
    from .loop.async_driver import arun, arun_events
    from .loop.events import (
        EVENTS_VERSION,
        SSE_HEADERS,
        ApprovalDecidedEvent,
        ApprovalRequestedEvent,
        ErrorEvent,
        EventFormError,
        FinalMessageEvent,
        ModelCallFinishedEvent,
        ModelCallStartedEvent,
        NoteEvent,
        ReasoningDeltaEvent,
        RunEvent,
        RunFinishedEvent,
        RunStartedEvent,
        TextDeltaEvent,
        ToolCallDeltaEvent,
        ToolCallFinishedEvent,
        ToolCallProgressEvent,
        ToolCallStartedEvent,
        asse_lines,
        event_from_json,
        sse_comment,
        sse_encode,
        sse_lines,
    )
    from .loop.interrupts import RunInterrupted
    from .loop.options import RunOptions
    from .loop.policies import (
        Approval,
        ApprovalRequest,
        BudgetInfo,
        CancelToken,
        Hooks,
        keep_last_turns,
    )
    from .loop.recovery import (
        StreamRetry,
        estimate_tokens,
        is_context_overflow,
        token_counter,
    )
    from .loop.results import CallReport, RunMetrics, RunResult, StopReason, ToolStats
    from .loop.stats import RunStats, StatsReport
    from .loop.sync_driver import run, run_events
    from .mcp.client import MCPConnection, MCPConnectionError, connect_mcp, mcp_tools
    from .mcp.convert import MCPToolsError, definition_from_mcp, definitions_from_mcp
    from .mcp.lockfile import (
        MCP_LOCK_NAME,
        MCPLock,
        MCPLockError,
        pin_tools,
        read_mcp_lock,
    )
    from .mcp.pins import MCPDriftError, ToolDrift, compare_mcp_tools
    from .mcp.server import mcp_server, serve_mcp
    from .models.base import (
        CanonicalModel,
        DeferredRootModel,
        FrozenModel,
        FunctionCallBase,
        NullRefusingModel,
        SchemaModel,
        ToolSpec,
    )
    from .models.check import (
        check,
        rejected,
        schema_problems,
        schema_validator,
        unchecked,
    )
    from .models.frozen import FrozenAny, FrozenDict, FrozenList, FrozenMap, FrozenSize
    from .models.jsontext import MAX_JSON_DEPTH, JSONTextError, parse_json
    from .models.lazy import DeferredModels, lazy_attributes
    from .models.problems import (
        ToolgenValidationError,
        ValidationProblem,
        problems_from,
    )
    from .schema.backtrack import PatternTimeout
    from .schema.ecma_regex import has_property_escapes, python_patterns, unsupported
    from .schema.examples import example_value
    from .schema.fit import (
        GEMINI_KEYWORDS,
        STRICT_UNSUPPORTED,
        Rewrite,
        Unfit,
        drop_strict_nulls,
        gemini_rewrites,
        gemini_schema,
        strict_rewrites,
        strict_schema,
    )
    from .schema.keywords import (
        SCHEMA_LISTS,
        SCHEMA_MAPS,
        SCHEMA_SINGLES,
        map_subschemas,
    )
    from .schema.matcher import (
        PATTERN_SECONDS,
        PatternError,
        PatternMatcher,
        search_within,
    )
    from .schema.pattern_keywords import bounded_keywords
    from .schema.patterns import PatternCache, bounded_core_schema, pattern_risk
    from .schema.plain import plain_schema, plain_validator
    from .schema.sentences import schema_error_sentences
    from .serve.auth import Credential
    from .serve.durable import DurableRuns, DurableRunsError, OpenRunsLimit
    from .serve.http import service_app
    from .streams.aggregator import (
        Aggregator,
        aaggregate,
        aggregate,
        astream_events,
        detect_wire,
        stream_events,
    )
    from .streams.events import (
        Event,
        Finish,
        MessageEnd,
        MessageStart,
        ReasoningDelta,
        StreamError,
        TextDelta,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallStart,
        Usage,
    )
    from .tools.guards import ToolFailure
    from .tools.loading import ToolsLoadError, load_bound_tools
    from .tools.registry import (
        Registry,
        ToolContext,
        ToolEntry,
        ToolError,
        ToolOutcome,
        UnboundToolsError,
    )
    from .tools.results import ContentParts
    from .wires.base import FINISH_REASONS, ProviderError, Request, Response, parts_of
    from .wires.codecs import (
        Codec,
        carried_wires,
        codec,
        convert,
        decode,
        detect,
        encode_error,
        encode_request,
        encode_response,
    )
    from .wires.export import (
        FORMATS,
        Export,
        FitTarget,
        GeminiSchema,
        ToolSet,
        canonical_definition,
        export_tools,
        fit_input_schema,
    )
    from .wires.export_notes import described
    from .wires.key_order import with_order
    from .wires.losses import Encoded, convert_request_noted, encode_request_noted
    from .wires.pairing import Problem, check_pairing
    from .wires.response_losses import encode_error_noted, encode_response_noted
    from .wires.settings import (
        SettingProblem,
        SettingsPlan,
        UnsupportedSettings,
        plan_settings,
    )
    from .wires.settings_types import (
        AnthropicSettings,
        BedrockSettings,
        CanonicalSettings,
        CohereSettings,
        GeminiSettings,
        InteractionsSettings,
        MistralSettings,
        OllamaSettings,
        OpenAIChatSettings,
        ResponsesSettings,
    )
    from .wires.table import (
        MCP,
        NAMES,
        ROWS,
        WIRES,
        LintRules,
        Route,
        Wire,
        canonical_name,
        target_names,
        wire,
    )

# Where each name lives, relative to this package (surface.py holds the table).
_HOMES = HOMES

__all__ = [
    "EVENTS_VERSION",
    "FINISH_REASONS",
    "FORMATS",
    "GEMINI_KEYWORDS",
    "MAX_JSON_DEPTH",
    "MCP",
    "MCP_LOCK_NAME",
    "NAMES",
    "PATTERN_SECONDS",
    "PRESETS",
    "ROWS",
    "SCHEMA_LISTS",
    "SCHEMA_MAPS",
    "SCHEMA_SINGLES",
    "SSE_HEADERS",
    "STRICT_UNSUPPORTED",
    "WIRES",
    "Aggregator",
    "AnthropicSettings",
    "Approval",
    "ApprovalDecidedEvent",
    "ApprovalRequest",
    "ApprovalRequestedEvent",
    "Auth",
    "BearerToken",
    "BedrockSettings",
    "BudgetInfo",
    "CallReport",
    "CancelToken",
    "CanonicalModel",
    "CanonicalSettings",
    "Codec",
    "CohereSettings",
    "ContentParts",
    "Credential",
    "DeferredModels",
    "DeferredRootModel",
    "DurableRuns",
    "DurableRunsError",
    "Encoded",
    "ErrorEvent",
    "Event",
    "EventFormError",
    "Export",
    "FinalMessageEvent",
    "Finish",
    "FitTarget",
    "FrozenAny",
    "FrozenDict",
    "FrozenList",
    "FrozenMap",
    "FrozenModel",
    "FrozenSize",
    "FunctionCallBase",
    "GeminiSchema",
    "GeminiSettings",
    "HTTPModel",
    "Hooks",
    "InteractionsSettings",
    "JSONTextError",
    "LintRules",
    "MCPConnection",
    "MCPConnectionError",
    "MCPDriftError",
    "MCPLock",
    "MCPLockError",
    "MCPToolsError",
    "MessageEnd",
    "MessageStart",
    "MissingExtra",
    "MistralSettings",
    "ModelCallFinishedEvent",
    "ModelCallStartedEvent",
    "ModelClient",
    "ModelClientBase",
    "NoteEvent",
    "NullRefusingModel",
    "OllamaSettings",
    "OpenAIChatSettings",
    "OpenRunsLimit",
    "PatternCache",
    "PatternError",
    "PatternMatcher",
    "PatternTimeout",
    "Preset",
    "Problem",
    "ProviderError",
    "ReasoningDelta",
    "ReasoningDeltaEvent",
    "Recorder",
    "Registry",
    "ReplayModel",
    "Request",
    "Response",
    "ResponsesSettings",
    "RetryPolicy",
    "Rewrite",
    "Route",
    "RunEvent",
    "RunFinishedEvent",
    "RunInterrupted",
    "RunMetrics",
    "RunOptions",
    "RunResult",
    "RunStartedEvent",
    "RunStats",
    "SchemaModel",
    "ScriptedModel",
    "SettingProblem",
    "SettingsPlan",
    "SigV4",
    "StatsReport",
    "StopReason",
    "StreamError",
    "StreamRetry",
    "TextDelta",
    "TextDeltaEvent",
    "ToolCallDelta",
    "ToolCallDeltaEvent",
    "ToolCallEnd",
    "ToolCallFinishedEvent",
    "ToolCallProgressEvent",
    "ToolCallStart",
    "ToolCallStartedEvent",
    "ToolContext",
    "ToolDrift",
    "ToolEntry",
    "ToolError",
    "ToolFailure",
    "ToolOutcome",
    "ToolSet",
    "ToolSpec",
    "ToolStats",
    "ToolgenValidationError",
    "ToolsLoadError",
    "UnboundToolsError",
    "Unfit",
    "UnsupportedSettings",
    "Usage",
    "ValidationProblem",
    "Wire",
    "aaggregate",
    "aggregate",
    "arun",
    "arun_events",
    "asse_lines",
    "assistant_turn",
    "astream_events",
    "bounded_core_schema",
    "bounded_keywords",
    "canonical_definition",
    "canonical_name",
    "carried_wires",
    "check",
    "check_pairing",
    "codec",
    "compare_mcp_tools",
    "connect_mcp",
    "convert",
    "convert_request_noted",
    "decode",
    "definition_from_mcp",
    "definitions_from_mcp",
    "described",
    "detect",
    "detect_wire",
    "drop_strict_nulls",
    "encode_error",
    "encode_error_noted",
    "encode_request",
    "encode_request_noted",
    "encode_response",
    "encode_response_noted",
    "estimate_tokens",
    "event_from_json",
    "example_value",
    "export_tools",
    "fit_input_schema",
    "gemini_rewrites",
    "gemini_schema",
    "google_token",
    "has_property_escapes",
    "is_context_overflow",
    "keep_last_turns",
    "lazy_attributes",
    "load_bound_tools",
    "main",
    "map_subschemas",
    "mcp_server",
    "mcp_tools",
    "parse_json",
    "parts_of",
    "pattern_risk",
    "pin_tools",
    "plain_schema",
    "plain_validator",
    "plan_settings",
    "preset_model",
    "problems_from",
    "python_patterns",
    "read_exchanges",
    "read_mcp_lock",
    "rejected",
    "run",
    "run_events",
    "schema_error_sentences",
    "schema_problems",
    "schema_validator",
    "search_within",
    "serve_mcp",
    "service_app",
    "sse_comment",
    "sse_encode",
    "sse_lines",
    "stream_events",
    "strict_rewrites",
    "strict_schema",
    "target_names",
    "token_counter",
    "tool_call",
    "unchecked",
    "unsupported",
    "wire",
    "with_order",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    # Kept, so a later read resolves to this package's module even if another took its name since.
    globals()[name] = value
    return value
