# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The runtime's surface, listed once: each module and the public names it holds, in layer order.

The package's `__init__` reads a name's module from it on first use and derives `__all__` from it; its
TYPE_CHECKING imports repeat it for type checkers, and tests/runtime/test_surface_listing.py holds the two equal.
Each module's entry sits on lines of its own: toolgen drops the entries of the modules a package leaves out.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# Each module, relative to the package, and the names of the surface it holds.
SURFACE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        ".models.base": (
            "CanonicalModel",
            "DeferredRootModel",
            "FrozenModel",
            "FunctionCallBase",
            "NullRefusingModel",
            "SchemaModel",
            "ToolSpec",
        ),
        ".models.frozen": (
            "FrozenAny",
            "FrozenDict",
            "FrozenList",
            "FrozenMap",
            "FrozenSize",
        ),
        ".models.problems": (
            "ToolgenValidationError",
            "ValidationProblem",
            "problems_from",
        ),
        ".models.check": (
            "check",
            "rejected",
            "schema_problems",
            "schema_validator",
            "unchecked",
        ),
        ".models.jsontext": (
            "JSONTextError",
            "MAX_JSON_DEPTH",
            "parse_json",
        ),
        ".models.lazy": (
            "DeferredModels",
            "lazy_attributes",
        ),
        ".tools.loading": (
            "ToolsLoadError",
            "load_bound_tools",
        ),
        ".tools.guards": ("ToolFailure",),
        ".tools.outcomes": (
            "ContentParts",
            "ToolError",
            "ToolOutcome",
        ),
        ".tools.entry": (
            "ToolContext",
            "ToolEntry",
        ),
        ".tools.registry": (
            "Registry",
            "UnboundToolsError",
        ),
        ".extras": ("MissingExtra",),
        ".wires.export": (
            "Export",
            "FORMATS",
            "FitTarget",
            "GeminiSchema",
            "ToolSet",
            "canonical_definition",
            "export_tools",
            "fit_input_schema",
        ),
        ".wires.export_notes": ("described",),
        ".wires.key_order": ("with_order",),
        ".wires.response_losses": (
            "encode_error_noted",
            "encode_response_noted",
        ),
        ".wires.losses": (
            "Encoded",
            "convert_request_noted",
            "encode_request_noted",
        ),
        ".wires.canonical": (
            "FINISH_REASONS",
            "ProviderError",
            "Request",
            "Response",
            "parts_of",
        ),
        ".wires.table": (
            "LintRules",
            "MCP",
            "NAMES",
            "ROWS",
            "Route",
            "WIRES",
            "Wire",
            "canonical_name",
            "target_names",
            "wire",
        ),
        ".wires.codecs": (
            "Codec",
            "carried_wires",
            "codec",
            "convert",
            "decode",
            "detect",
            "encode_error",
            "encode_request",
            "encode_response",
        ),
        ".wires.pairing": (
            "Problem",
            "check_pairing",
        ),
        ".wires.settings": (
            "SettingProblem",
            "SettingsPlan",
            "UnsupportedSettings",
            "plan_settings",
        ),
        ".wires.settings_types": (
            "AnthropicSettings",
            "BedrockSettings",
            "CanonicalSettings",
            "CohereSettings",
            "GeminiSettings",
            "InteractionsSettings",
            "MistralSettings",
            "OllamaSettings",
            "OpenAIChatSettings",
            "ResponsesSettings",
        ),
        ".streams.events": (
            "Event",
            "Finish",
            "MessageEnd",
            "MessageStart",
            "ReasoningDelta",
            "StreamError",
            "TextDelta",
            "ToolCallDelta",
            "ToolCallEnd",
            "ToolCallStart",
            "Usage",
        ),
        ".streams.aggregator": (
            "Aggregator",
            "aaggregate",
            "aggregate",
            "astream_events",
            "detect_wire",
            "stream_events",
        ),
        ".clients.auth": (
            "Auth",
            "BearerToken",
            "google_token",
        ),
        ".clients.base": (
            "ModelClient",
            "ModelClientBase",
        ),
        ".clients.http": ("HTTPModel",),
        ".clients.retry": ("RetryPolicy",),
        ".clients.presets": (
            "PRESETS",
            "Preset",
            "preset_model",
        ),
        ".clients.recording": (
            "Recorder",
            "read_exchanges",
        ),
        ".clients.sigv4": ("SigV4",),
        ".clients.scripted": (
            "ReplayModel",
            "ScriptedModel",
            "assistant_turn",
            "tool_call",
        ),
        ".loop.events": (
            "ApprovalDecidedEvent",
            "ApprovalRequestedEvent",
            "EVENTS_VERSION",
            "ErrorEvent",
            "EventFormError",
            "FinalMessageEvent",
            "ModelCallFinishedEvent",
            "ModelCallStartedEvent",
            "NoteEvent",
            "ReasoningDeltaEvent",
            "RunEvent",
            "RunFinishedEvent",
            "RunStartedEvent",
            "SSE_HEADERS",
            "TextDeltaEvent",
            "ToolCallDeltaEvent",
            "ToolCallFinishedEvent",
            "ToolCallProgressEvent",
            "ToolCallStartedEvent",
            "asse_lines",
            "event_from_json",
            "sse_comment",
            "sse_encode",
            "sse_lines",
        ),
        ".loop.policies": (
            "Approval",
            "ApprovalRequest",
            "BudgetInfo",
            "CancelToken",
            "Hooks",
            "keep_last_turns",
        ),
        ".loop.recovery": (
            "StreamRetry",
            "estimate_tokens",
            "is_context_overflow",
            "token_counter",
        ),
        ".loop.results": (
            "CallReport",
            "RunMetrics",
            "RunResult",
            "StopReason",
            "ToolStats",
        ),
        ".loop.stats": (
            "RunStats",
            "StatsReport",
        ),
        ".loop.options": ("RunOptions",),
        ".loop.interrupts": ("RunInterrupted",),
        ".loop.sync_driver": (
            "run",
            "run_events",
        ),
        ".loop.async_driver": (
            "arun",
            "arun_events",
        ),
        ".serve.durable": (
            "DurableRuns",
            "DurableRunsError",
            "OpenRunsLimit",
        ),
        ".serve.auth": ("Credential",),
        ".serve.http": ("service_app",),
        ".schema.sentences": ("schema_error_sentences",),
        ".schema.keywords": (
            "SCHEMA_LISTS",
            "SCHEMA_MAPS",
            "SCHEMA_SINGLES",
            "map_subschemas",
        ),
        ".schema.fit": (
            "GEMINI_KEYWORDS",
            "Rewrite",
            "STRICT_UNSUPPORTED",
            "Unfit",
            "drop_strict_nulls",
            "gemini_rewrites",
            "gemini_schema",
            "strict_rewrites",
            "strict_schema",
        ),
        ".schema.ecma_regex": (
            "has_property_escapes",
            "python_patterns",
            "unsupported",
        ),
        ".schema.backtrack": ("PatternTimeout",),
        ".schema.matcher": (
            "PATTERN_SECONDS",
            "PatternError",
            "PatternMatcher",
            "pattern_problem",
            "search_within",
        ),
        ".schema.patterns": (
            "PatternCache",
            "pattern_risk",
        ),
        ".schema.core_patterns": ("bounded_core_schema",),
        ".schema.pattern_keywords": ("bounded_keywords",),
        ".mcp.client": (
            "MCPConnection",
            "MCPConnectionError",
            "connect_mcp",
            "mcp_tools",
        ),
        ".mcp.convert": (
            "MCPToolsError",
            "definition_from_mcp",
            "definitions_from_mcp",
        ),
        ".mcp.lockfile": (
            "MCPLock",
            "MCPLockError",
            "MCP_LOCK_NAME",
            "pin_tools",
            "read_mcp_lock",
        ),
        ".mcp.pins": (
            "MCPDriftError",
            "ToolDrift",
            "compare_mcp_tools",
        ),
        ".mcp.server": (
            "mcp_server",
            "serve_mcp",
        ),
        ".app.main": ("main",),
        ".schema.examples": ("example_value",),
        ".schema.plain": (
            "plain_schema",
            "plain_validator",
        ),
    }
)

# Each name's module: what `__init__.__getattr__` imports.
HOMES: Mapping[str, str] = MappingProxyType(
    {name: module for module, names in SURFACE.items() for name in names}
)
