# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""connect_mcp / mcp_tools: a remote MCP server's tools added to a registry as run-time tools.

The connection runs the official SDK's client on an event loop of its own thread, so its tools are plain sync
handlers that work under run() and arun() alike. Each tool is added with its inputSchema (the registry checks
arguments before the server sees them) and with the policies a toolgen server puts in `_meta` (returnDirect,
requiresApproval, timeout), which the loop then honours as it does for built tools. A server's approval
question for a tool marked requiresApproval is answered yes: the loop asked its own approver before the call.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..models.check import schema_validator
from ..tools.guards import ToolFailure
from ..tools.registry import Registry, ToolContext
from .convert import MCPToolsError, definitions_from_mcp
from .sdk import mcp_module, mcp_types
from .server import approval_tool

if (
    TYPE_CHECKING
):  # only type checkers read it: typing.Self is 3.11+, the runtime runs on 3.10
    from typing import Self

# Answers a server's elicitation that is not toolgen's approval question: (message, requested schema) to the
# content to send back, or None to decline.
Elicit = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any] | None]]


class MCPConnectionError(RuntimeError):
    """The MCP server could not be started, reached, or understood; the message says which and why."""


def _leaf(error: BaseException) -> BaseException:
    """The first error inside exception groups (anyio's task groups wrap what went wrong in them)."""
    inner = getattr(error, "exceptions", None)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        error = inner[0]
        inner = getattr(error, "exceptions", None)
    return error


def _failure(error: BaseException) -> str:
    error = _leaf(error)
    text = str(error) or type(error).__name__
    return text if isinstance(error, ToolFailure) else f"{type(error).__name__}: {text}"


def _text_of(blocks: Sequence[Any]) -> str:
    texts = []
    for block in blocks:
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
        else:  # images, audio, resources: their JSON, so nothing is dropped without a word
            texts.append(block.model_dump_json(by_alias=True, exclude_none=True))
    return "\n".join(texts)


class MCPConnection:
    """One live MCP server: by command (a list, or a string split like a shell) over stdio, or by URL over
    streamable HTTP. Close it (or use it as a context manager) to stop the server process."""

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 60.0,
        on_elicit: Elicit | None = None,
    ) -> None:
        self.label = target if isinstance(target, str) else shlex.join(target)
        self.timeout = timeout
        self._on_elicit = on_elicit
        self._approval: frozenset[str] = frozenset()
        anyio = mcp_module("anyio.from_thread")
        mcp = mcp_module("mcp")
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            server: Any = target
        else:
            argv = shlex.split(target) if isinstance(target, str) else list(target)
            if not argv:
                raise MCPConnectionError("an MCP server command cannot be empty")
            server = mcp.StdioServerParameters(
                command=argv[0],
                args=argv[1:],
                env=dict(env) if env is not None else None,
                cwd=cwd,
            )
        client = mcp.Client(
            server,
            read_timeout_seconds=timeout,
            elicitation_callback=self._elicit,
        )
        self._portal_cm = anyio.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._client_cm: Any = None
        try:
            entering = self._portal.wrap_async_context_manager(client)
            self._client = entering.__enter__()
            self._client_cm = entering
            self.definitions = self.refresh()
        except BaseException as error:
            if self._client_cm is not None:
                self.close()  # the client's context first: the portal waits for the task holding it
            else:
                self._portal_cm.__exit__(None, None, None)
            if isinstance(error, MCPToolsError):
                raise MCPToolsError(f"{self.label}: {error}", error.pointer) from None
            if isinstance(error, (MCPConnectionError, KeyboardInterrupt)):
                raise
            raise MCPConnectionError(
                f"could not connect to the MCP server {self.label}: {_failure(error)}"
            ) from error

    def refresh(self) -> list[dict[str, Any]]:
        """The server's tools now, as canonical definitions (raises MCPToolsError for a list toolgen cannot use)."""
        pages: list[dict[str, Any]] = []
        cursor, seen = None, set()
        for _ in range(1000):  # a server whose cursor never ends cannot hang this
            listed = self._portal.call(self._list_page, cursor)
            data = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            pages.extend(data.get("tools", []))
            cursor = listed.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                raise MCPToolsError(
                    f"{self.label}: its tools list repeats the cursor {cursor!r}; it never ends"
                )
            seen.add(cursor)
        else:
            raise MCPToolsError(
                f"{self.label}: its tools list did not end after 1,000 pages"
            )
        self.definitions = definitions_from_mcp(pages)
        self._approval = frozenset(
            d["name"] for d in self.definitions if d.get("requiresApproval")
        )
        return self.definitions

    async def _list_page(self, cursor: str | None) -> Any:
        return await self._client.list_tools(cursor=cursor, cache_mode="refresh")

    async def _elicit(self, context: Any, params: Any) -> Any:
        types = mcp_types()
        if approval_tool(params) in self._approval:
            return types.ElicitResult(action="accept", content={})
        schema = getattr(params, "requested_schema", None)
        if self._on_elicit is None or schema is None:
            return types.ElicitResult(action="decline")
        content = await self._on_elicit(params.message, schema)
        if content is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=dict(content))

    def call(self, name: str, arguments: Any, timeout: float | None = None) -> Any:
        """Call the remote tool: its structuredContent, else its text; ToolFailure with the server's words
        when it answers isError, or when the server is gone."""
        try:
            result = self._portal.call(
                self._call, name, arguments, timeout or self.timeout
            )
        except ToolFailure:
            raise
        except Exception as error:  # noqa: BLE001 - a dead server or a broken answer is the model's to hear
            if self._vanished(name):
                raise ToolFailure(
                    f"the MCP server {self.label} no longer has a tool named {name!r}"
                ) from None
            raise ToolFailure(
                f"the MCP server {self.label} did not answer the call: {_failure(error)}"
            ) from None
        text = _text_of(result.content)
        if result.is_error:
            raise ToolFailure(text.removeprefix("Error: ") or "the tool failed")
        if result.structured_content is not None:
            return result.structured_content
        return text

    def _vanished(self, name: str) -> bool:
        """Whether a failed call was to a tool the server no longer lists (False when it cannot be asked)."""
        try:
            return name not in {d["name"] for d in self.refresh()}
        except Exception:  # noqa: BLE001 - a server that cannot list either has failed in another way
            return False

    async def _call(self, name: str, arguments: Any, timeout: float) -> Any:
        anyio = mcp_module("anyio")
        self._bound_output_check(name)
        with anyio.fail_after(timeout + 1):
            return await self._client.call_tool(
                name, arguments, read_timeout_seconds=timeout
            )

    def _bound_output_check(self, name: str) -> None:
        """The SDK checks a result's structuredContent against the tool's outputSchema with jsonschema, whose
        patterns run on Python's re, without a bound (a server's `^(a+)+$` would stop this process): the
        validator it keeps for the tool is made toolgen's, whose patterns are bounded, before it makes its own."""
        try:
            session = self._client.session
            schemas = session._tool_output_schemas
            kept = session._tool_output_validators
        except Exception:  # noqa: BLE001 - another SDK version keeps them elsewhere; its own check runs then
            return
        schema = schemas.get(name) if isinstance(schemas, dict) else None
        if not isinstance(kept, dict) or name in kept or not isinstance(schema, dict):
            return
        try:
            validator = schema_validator(schema)
            type(validator).check_schema(schema)
        except Exception:  # noqa: BLE001 - a schema that is not one: the SDK says so in its own words
            return
        kept[name] = validator

    def add_to(
        self,
        registry: Registry,
        *,
        names: Sequence[str] | None = None,
        prefix: str = "",
    ) -> list[str]:
        """Add the server's tools (all it has handlers for, or `names`) to `registry` as run-time tools named
        `prefix + name`; returns the names added. A name the registry already has is an error, not a silent
        replacement."""
        chosen = [
            d
            for d in self.definitions
            if (d["name"] in names if names is not None else not d.get("unavailable"))
        ]
        missing = sorted(set(names or ()) - {d["name"] for d in chosen})
        if missing:
            raise MCPToolsError(f"{self.label} has no tool named {', '.join(missing)}")
        taken = sorted(
            prefix + d["name"] for d in chosen if prefix + d["name"] in registry
        )
        if taken:
            raise ValueError(f"the registry already has tools named {', '.join(taken)}")
        for definition in chosen:
            output = definition.get("outputSchema")
            registry.add(
                prefix + definition["name"],
                definition["inputSchema"],
                self._handler(definition["name"], definition.get("timeout")),
                description=definition.get("description"),
                output_schema=output if isinstance(output, Mapping) else None,
                timeout=definition.get("timeout"),
                strict=definition.get("strict"),
                title=definition.get("title"),
                return_direct=bool(definition.get("returnDirect")),
                requires_approval=bool(definition.get("requiresApproval")),
                meta=definition.get("meta"),
                annotations=definition.get("annotations"),
                describe_meta=definition.get("describeMeta") or False,
            )
        return [prefix + d["name"] for d in chosen]

    def _handler(
        self, name: str, timeout: float | None
    ) -> Callable[[Any, ToolContext], Any]:
        def call_remote(args: Any, ctx: ToolContext) -> Any:
            return self.call(name, args, timeout)

        return call_remote

    def close(self) -> None:
        """Stop the connection (and the server process, for a command); safe to call twice."""
        client_cm, self._client_cm = self._client_cm, None
        if client_cm is None:
            return
        try:
            client_cm.__exit__(None, None, None)
        except Exception:  # noqa: BLE001, S110 - a server that already died has nothing left to close
            pass
        finally:
            self._portal_cm.__exit__(None, None, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect_mcp(target: str | Sequence[str], **options: Any) -> MCPConnection:
    """A connection to the MCP server at `target` (a URL, or a command); options as MCPConnection takes."""
    return MCPConnection(target, **options)


def mcp_tools(
    registry: Registry,
    target: str | Sequence[str],
    *,
    names: Sequence[str] | None = None,
    prefix: str = "",
    **options: Any,
) -> MCPConnection:
    """Connect to `target` and add its tools to `registry`; keep the connection open while they are used."""
    connection = MCPConnection(target, **options)
    try:
        connection.add_to(registry, names=names, prefix=prefix)
    except BaseException:
        connection.close()
        raise
    return connection
