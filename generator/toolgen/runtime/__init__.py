# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The runtime's declared surface: every name the generator and the generated modules use, imported on first use.

Sub-packages by layer, each importing only those below it: schema (JSON Schema helpers), wires (canonical
requests and responses in wires/canonical.py, the table of wires, and one sub-package per wire: its codec,
message mapping, short path and detection), models (pydantic bases, validation and its errors), streams
(framing, events, the stream-state base, the aggregator), tools (the registry), clients (model clients),
observe (OpenTelemetry spans and metrics, a no-op without it), loop (the agent loop and its events), serve
(durable runs on DBOS over HTTP, and their page), mcp (serving and using tools over MCP), app (the package's
command line) and demo (the offline example).
A layer is a folder but for one path rule: every `wires/<wire>/stream*.py` (a wire's stream state and its
helpers) belongs to the streams layer, beside its wire's codec but above wires/ like the rest of streams/.
The names and their modules are listed once, in surface.py; `__all__` is derived from it, and the imports for
type checkers below repeat it (a test holds the two equal).
A name is imported with its module when first read, so importing the package costs nothing by itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .surface import HOMES

if TYPE_CHECKING:
    # Each name re-exported as itself, for type checkers: surface.py's table, which a test holds them to.
    from .app.main import main as main
    from .clients.auth import Auth as Auth
    from .clients.auth import BearerToken as BearerToken
    from .clients.auth import google_token as google_token
    from .clients.base import ModelClient as ModelClient
    from .clients.base import ModelClientBase as ModelClientBase
    from .clients.http import HTTPModel as HTTPModel
    from .clients.presets import PRESETS as PRESETS
    from .clients.presets import Preset as Preset
    from .clients.presets import preset_model as preset_model
    from .clients.recording import Recorder as Recorder
    from .clients.recording import read_exchanges as read_exchanges
    from .clients.retry import RetryPolicy as RetryPolicy
    from .clients.scripted import ReplayModel as ReplayModel
    from .clients.scripted import ScriptedModel as ScriptedModel
    from .clients.scripted import assistant_turn as assistant_turn
    from .clients.scripted import tool_call as tool_call
    from .clients.sigv4 import SigV4 as SigV4
    from .extras import MissingExtra as MissingExtra
    from .loop.async_driver import arun as arun
    from .loop.async_driver import arun_events as arun_events
    from .loop.events import EVENTS_VERSION as EVENTS_VERSION
    from .loop.events import SSE_HEADERS as SSE_HEADERS
    from .loop.events import ApprovalDecidedEvent as ApprovalDecidedEvent
    from .loop.events import ApprovalRequestedEvent as ApprovalRequestedEvent
    from .loop.events import ErrorEvent as ErrorEvent
    from .loop.events import EventFormError as EventFormError
    from .loop.events import FinalMessageEvent as FinalMessageEvent
    from .loop.events import ModelCallFinishedEvent as ModelCallFinishedEvent
    from .loop.events import ModelCallStartedEvent as ModelCallStartedEvent
    from .loop.events import NoteEvent as NoteEvent
    from .loop.events import ReasoningDeltaEvent as ReasoningDeltaEvent
    from .loop.events import RunEvent as RunEvent
    from .loop.events import RunFinishedEvent as RunFinishedEvent
    from .loop.events import RunStartedEvent as RunStartedEvent
    from .loop.events import TextDeltaEvent as TextDeltaEvent
    from .loop.events import ToolCallDeltaEvent as ToolCallDeltaEvent
    from .loop.events import ToolCallFinishedEvent as ToolCallFinishedEvent
    from .loop.events import ToolCallProgressEvent as ToolCallProgressEvent
    from .loop.events import ToolCallStartedEvent as ToolCallStartedEvent
    from .loop.events import asse_lines as asse_lines
    from .loop.events import event_from_json as event_from_json
    from .loop.events import sse_comment as sse_comment
    from .loop.events import sse_encode as sse_encode
    from .loop.events import sse_lines as sse_lines
    from .loop.interrupts import RunInterrupted as RunInterrupted
    from .loop.options import RunOptions as RunOptions
    from .loop.policies import Approval as Approval
    from .loop.policies import ApprovalRequest as ApprovalRequest
    from .loop.policies import BudgetInfo as BudgetInfo
    from .loop.policies import CancelToken as CancelToken
    from .loop.policies import Hooks as Hooks
    from .loop.policies import keep_last_turns as keep_last_turns
    from .loop.recovery import StreamRetry as StreamRetry
    from .loop.recovery import estimate_tokens as estimate_tokens
    from .loop.recovery import is_context_overflow as is_context_overflow
    from .loop.recovery import token_counter as token_counter
    from .loop.results import CallReport as CallReport
    from .loop.results import RunMetrics as RunMetrics
    from .loop.results import RunResult as RunResult
    from .loop.results import StopReason as StopReason
    from .loop.results import ToolStats as ToolStats
    from .loop.stats import RunStats as RunStats
    from .loop.stats import StatsReport as StatsReport
    from .loop.sync_driver import run as run
    from .loop.sync_driver import run_events as run_events
    from .mcp.client import MCPConnection as MCPConnection
    from .mcp.client import MCPConnectionError as MCPConnectionError
    from .mcp.client import connect_mcp as connect_mcp
    from .mcp.client import mcp_tools as mcp_tools
    from .mcp.convert import MCPToolsError as MCPToolsError
    from .mcp.convert import definition_from_mcp as definition_from_mcp
    from .mcp.convert import definitions_from_mcp as definitions_from_mcp
    from .mcp.lockfile import MCP_LOCK_NAME as MCP_LOCK_NAME
    from .mcp.lockfile import MCPLock as MCPLock
    from .mcp.lockfile import MCPLockError as MCPLockError
    from .mcp.lockfile import pin_tools as pin_tools
    from .mcp.lockfile import read_mcp_lock as read_mcp_lock
    from .mcp.pins import MCPDriftError as MCPDriftError
    from .mcp.pins import ToolDrift as ToolDrift
    from .mcp.pins import compare_mcp_tools as compare_mcp_tools
    from .mcp.server import mcp_server as mcp_server
    from .mcp.server import serve_mcp as serve_mcp
    from .models.base import CanonicalModel as CanonicalModel
    from .models.base import DeferredRootModel as DeferredRootModel
    from .models.base import FrozenModel as FrozenModel
    from .models.base import FunctionCallBase as FunctionCallBase
    from .models.base import NullRefusingModel as NullRefusingModel
    from .models.base import SchemaModel as SchemaModel
    from .models.base import ToolSpec as ToolSpec
    from .models.check import check as check
    from .models.check import rejected as rejected
    from .models.check import schema_problems as schema_problems
    from .models.check import schema_validator as schema_validator
    from .models.check import unchecked as unchecked
    from .models.frozen import FrozenAny as FrozenAny
    from .models.frozen import FrozenDict as FrozenDict
    from .models.frozen import FrozenList as FrozenList
    from .models.frozen import FrozenMap as FrozenMap
    from .models.frozen import FrozenSize as FrozenSize
    from .models.jsontext import MAX_JSON_DEPTH as MAX_JSON_DEPTH
    from .models.jsontext import JSONTextError as JSONTextError
    from .models.jsontext import parse_json as parse_json
    from .models.lazy import DeferredModels as DeferredModels
    from .models.lazy import lazy_attributes as lazy_attributes
    from .models.problems import ToolgenValidationError as ToolgenValidationError
    from .models.problems import ValidationProblem as ValidationProblem
    from .models.problems import problems_from as problems_from
    from .schema.backtrack import PatternTimeout as PatternTimeout
    from .schema.core_patterns import bounded_core_schema as bounded_core_schema
    from .schema.ecma_regex import has_property_escapes as has_property_escapes
    from .schema.ecma_regex import python_patterns as python_patterns
    from .schema.ecma_regex import unsupported as unsupported
    from .schema.examples import example_value as example_value
    from .schema.fit import GEMINI_KEYWORDS as GEMINI_KEYWORDS
    from .schema.fit import STRICT_UNSUPPORTED as STRICT_UNSUPPORTED
    from .schema.fit import Rewrite as Rewrite
    from .schema.fit import Unfit as Unfit
    from .schema.fit import drop_strict_nulls as drop_strict_nulls
    from .schema.fit import gemini_rewrites as gemini_rewrites
    from .schema.fit import gemini_schema as gemini_schema
    from .schema.fit import strict_rewrites as strict_rewrites
    from .schema.fit import strict_schema as strict_schema
    from .schema.keywords import SCHEMA_LISTS as SCHEMA_LISTS
    from .schema.keywords import SCHEMA_MAPS as SCHEMA_MAPS
    from .schema.keywords import SCHEMA_SINGLES as SCHEMA_SINGLES
    from .schema.keywords import map_subschemas as map_subschemas
    from .schema.matcher import PATTERN_SECONDS as PATTERN_SECONDS
    from .schema.matcher import PatternError as PatternError
    from .schema.matcher import PatternMatcher as PatternMatcher
    from .schema.matcher import pattern_problem as pattern_problem
    from .schema.matcher import search_within as search_within
    from .schema.pattern_keywords import bounded_keywords as bounded_keywords
    from .schema.patterns import PatternCache as PatternCache
    from .schema.patterns import pattern_risk as pattern_risk
    from .schema.plain import plain_schema as plain_schema
    from .schema.plain import plain_validator as plain_validator
    from .schema.sentences import schema_error_sentences as schema_error_sentences
    from .serve.auth import Credential as Credential
    from .serve.durable import DurableRuns as DurableRuns
    from .serve.durable import DurableRunsError as DurableRunsError
    from .serve.durable import OpenRunsLimit as OpenRunsLimit
    from .serve.http import service_app as service_app
    from .streams.aggregator import Aggregator as Aggregator
    from .streams.aggregator import aaggregate as aaggregate
    from .streams.aggregator import aggregate as aggregate
    from .streams.aggregator import astream_events as astream_events
    from .streams.aggregator import detect_wire as detect_wire
    from .streams.aggregator import stream_events as stream_events
    from .streams.events import Event as Event
    from .streams.events import Finish as Finish
    from .streams.events import MessageEnd as MessageEnd
    from .streams.events import MessageStart as MessageStart
    from .streams.events import ReasoningDelta as ReasoningDelta
    from .streams.events import StreamError as StreamError
    from .streams.events import TextDelta as TextDelta
    from .streams.events import ToolCallDelta as ToolCallDelta
    from .streams.events import ToolCallEnd as ToolCallEnd
    from .streams.events import ToolCallStart as ToolCallStart
    from .streams.events import Usage as Usage
    from .tools.entry import ToolContext as ToolContext
    from .tools.entry import ToolEntry as ToolEntry
    from .tools.guards import ToolFailure as ToolFailure
    from .tools.loading import ToolsLoadError as ToolsLoadError
    from .tools.loading import load_bound_tools as load_bound_tools
    from .tools.outcomes import ContentParts as ContentParts
    from .tools.outcomes import ToolError as ToolError
    from .tools.outcomes import ToolOutcome as ToolOutcome
    from .tools.registry import Registry as Registry
    from .tools.registry import UnboundToolsError as UnboundToolsError
    from .wires.canonical import FINISH_REASONS as FINISH_REASONS
    from .wires.canonical import ProviderError as ProviderError
    from .wires.canonical import Request as Request
    from .wires.canonical import Response as Response
    from .wires.canonical import parts_of as parts_of
    from .wires.codecs import Codec as Codec
    from .wires.codecs import carried_wires as carried_wires
    from .wires.codecs import codec as codec
    from .wires.codecs import convert as convert
    from .wires.codecs import decode as decode
    from .wires.codecs import detect as detect
    from .wires.codecs import encode_error as encode_error
    from .wires.codecs import encode_request as encode_request
    from .wires.codecs import encode_response as encode_response
    from .wires.export import FORMATS as FORMATS
    from .wires.export import Export as Export
    from .wires.export import FitTarget as FitTarget
    from .wires.export import GeminiSchema as GeminiSchema
    from .wires.export import ToolSet as ToolSet
    from .wires.export import canonical_definition as canonical_definition
    from .wires.export import export_tools as export_tools
    from .wires.export import fit_input_schema as fit_input_schema
    from .wires.export_notes import described as described
    from .wires.key_order import with_order as with_order
    from .wires.losses import Encoded as Encoded
    from .wires.losses import convert_request_noted as convert_request_noted
    from .wires.losses import encode_request_noted as encode_request_noted
    from .wires.pairing import Problem as Problem
    from .wires.pairing import check_pairing as check_pairing
    from .wires.response_losses import encode_error_noted as encode_error_noted
    from .wires.response_losses import encode_response_noted as encode_response_noted
    from .wires.settings import SettingProblem as SettingProblem
    from .wires.settings import SettingsPlan as SettingsPlan
    from .wires.settings import UnsupportedSettings as UnsupportedSettings
    from .wires.settings import plan_settings as plan_settings
    from .wires.settings_types import AnthropicSettings as AnthropicSettings
    from .wires.settings_types import BedrockSettings as BedrockSettings
    from .wires.settings_types import CanonicalSettings as CanonicalSettings
    from .wires.settings_types import CohereSettings as CohereSettings
    from .wires.settings_types import GeminiSettings as GeminiSettings
    from .wires.settings_types import InteractionsSettings as InteractionsSettings
    from .wires.settings_types import MistralSettings as MistralSettings
    from .wires.settings_types import OllamaSettings as OllamaSettings
    from .wires.settings_types import OpenAIChatSettings as OpenAIChatSettings
    from .wires.settings_types import ResponsesSettings as ResponsesSettings
    from .wires.table import MCP as MCP
    from .wires.table import NAMES as NAMES
    from .wires.table import ROWS as ROWS
    from .wires.table import WIRES as WIRES
    from .wires.table import LintRules as LintRules
    from .wires.table import Route as Route
    from .wires.table import Wire as Wire
    from .wires.table import canonical_name as canonical_name
    from .wires.table import target_names as target_names
    from .wires.table import wire as wire

# Where each name lives, relative to this package (surface.py holds the table).
_HOMES = HOMES
__all__ = tuple(HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    # Kept, so a later read resolves to this package's module even if another took its name since.
    globals()[name] = value
    return value
