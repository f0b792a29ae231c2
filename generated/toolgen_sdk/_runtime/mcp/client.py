# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""connect_mcp / mcp_tools: a remote MCP server's tools added to a registry as run-time tools.

The connection runs the official SDK's client on an event loop of its own thread, so its tools are plain sync
handlers that work under run() and arun() alike. Each tool is added with its inputSchema (the registry checks
arguments before the server sees them) and with the policies a toolgen server puts in `_meta` (returnDirect,
requiresApproval, timeout), which the loop then honours as it does for built tools. A server's approval
question for a tool marked requiresApproval is answered yes for the call in flight only (the loop asked its own
approver before it); other elicitations (form and URL), sampling and roots go to the application's callbacks
(elicitation.py). A tool that requires MCP tasks runs as one (client_tasks.py), or the server is refused at
connect. What a server lists and answers is bounded and checked (listing.py, answers.py); an answer the SDK cannot
read is read block by block, or fails its call at once (unread.py). The registries the connection fed follow
its tools list on every refresh, and after notifications/tools/list_changed before its next call (feeding.py).
"""

from __future__ import annotations

import logging
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..tools.entry import ToolContext, ToolEntry
from ..tools.guards import ToolFailure, cut_text
from ..tools.registry import Registry
from .answers import (
    DEFAULT_MAX_RESULT_BYTES,
    answered,
    missing_structure,
    output_check,
    timed_out,
)
from .client_tasks import call_as_task, required_task_tools, task_refusal
from .content import error_text, tool_result
from .convert import MCPToolsError, definitions_from_mcp
from .elicitation import Asked, Elicit, Roots, Sample
from .feeding import DEFAULT_MAX_DESCRIPTION, Fed, chosen, unfit
from .listing import DEFAULT_MAX_TOOLS, check_count, output_validators
from .progress import ReportingArguments, progress_callback
from .sdk import mcp_module, mcp_types, modern_protocol
from .unread import PARSE_ERROR, KeptAnswers, Unreadable, keep_answers

if (
    TYPE_CHECKING
):  # only type checkers read it: typing.Self is 3.11+, the runtime runs on 3.10
    from typing import Self


_log = logging.getLogger(__name__)


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


class _Unchecked:
    """What the SDK checks structuredContent with in place of jsonschema: nothing (answers.py checks it)."""

    def iter_errors(self, instance: Any) -> Any:
        return iter(())


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
        on_sample: Sample | None = None,
        roots: Roots | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_tools: int = DEFAULT_MAX_TOOLS,
        max_description: int = DEFAULT_MAX_DESCRIPTION,
        lock: Any = None,
        on_drift: str | None = None,
    ) -> None:
        self.label = target if isinstance(target, str) else shlex.join(target)
        from .pins import MCPDriftError, Pins

        # What each refresh compares the tools with (pins.py): a lock that cannot be read fails before any start.
        self._pins = Pins.of(lock, on_drift)
        self.drift = self._pins.none()
        self.timeout = timeout
        self.max_result_bytes, self.max_tools = max_result_bytes, max_tools
        self.max_description = max_description
        # The registries add_to fed (feeding.py).
        self._fed: list[Fed] = []
        # True from the server's word that its tools changed until the refresh that follows (before the next call).
        self.tools_changed = False
        self._refreshing = threading.Lock()
        self._unreadable = Unreadable()
        self._kept: KeptAnswers | None = None
        self._listening: Any = None
        # Elicitation, sampling and roots (elicitation.py); sampling and roots advertised only when given.
        self._asked = Asked(on_elicit, on_sample, roots)
        self._approval: frozenset[str] = frozenset()
        self._checks: dict[str, Any] = {}
        self._tasks: frozenset[str] = frozenset()
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
            sampling_callback=self._asked.sample if on_sample is not None else None,
            list_roots_callback=self._asked.list_roots if roots is not None else None,
            message_handler=self._on_message,
        )
        self._portal_cm = anyio.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._client_cm: Any = None
        try:
            entering = self._portal.wrap_async_context_manager(client)
            self._client = entering.__enter__()
            self._client_cm = entering
            self._kept = keep_answers(self._client.session)
            self.definitions = self.refresh()
            self._follow_listing()
        except BaseException as error:
            if self._client_cm is not None:
                self.close()  # the client's context first: the portal waits for the task holding it
            else:
                self._portal_cm.__exit__(None, None, None)
            if isinstance(error, MCPDriftError):
                raise  # it names the server and each tool already
            if isinstance(error, MCPToolsError):
                raise MCPToolsError(f"{self.label}: {error}", error.pointer) from None
            if isinstance(error, (MCPConnectionError, KeyboardInterrupt)):
                raise
            raise MCPConnectionError(
                f"could not connect to the MCP server {self.label}: {_failure(error)}"
            ) from error

    def refresh(self) -> list[dict[str, Any]]:
        """The server's tools now, as canonical definitions (raises MCPToolsError for a list toolgen cannot use);
        each registry add_to fed gets the tools added, changed and removed since (feeding.py)."""
        with self._refreshing:
            self.tools_changed = False
            definitions = self._listed()
            for fed in self._fed:
                fed.sync(definitions, self._add_one, self.max_description, self.label)
                added = {name: remote for name, (remote, _, _) in fed.added.items()}
                self._pins.tell(fed.registry, self.label, self.drift, added)
            return definitions

    def _listed(self) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        cursor, seen = None, set()
        for _ in range(1000):  # a server whose cursor never ends cannot hang this
            listed = self._portal.call(self._list_page, cursor)
            data = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            pages.extend(data.get("tools", []))
            check_count(len(pages), self.max_tools)
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
        self._checked_listing(self.definitions)
        self._approval = frozenset(
            d["name"] for d in self.definitions if d.get("requiresApproval")
        )
        self.drift = self._pins.check(self.label, self.definitions, self.drift)
        return self.definitions

    async def _list_page(self, cursor: str | None) -> Any:
        return await self._client.list_tools(cursor=cursor, cache_mode="refresh")

    def _checked_listing(self, definitions: list[dict[str, Any]]) -> None:
        """Schemas that are JSON Schemas, tools that need tasks runnable as such: else MCPToolsError naming them."""
        validators = output_validators(definitions)
        self._checks = {d["name"]: output_check(validators, d) for d in definitions}
        required = required_task_tools(definitions)
        refusal = task_refusal(self._client.session) if required else None
        if refusal is not None:
            index = [d["name"] for d in definitions].index(required[0])
            raise MCPToolsError(
                f"tools[{index}] ({required[0]!r}) requires MCP tasks (execution.taskSupport: required), and"
                f" {refusal}",
                (index, "execution", "taskSupport"),
            )
        self._tasks = frozenset(required)

    async def _elicit(self, context: Any, params: Any) -> Any:
        return await self._asked.elicit(params, self._approval)

    def _follow_listing(self) -> None:
        """From 2026-07-28 a server says its tools changed only on a subscriptions/listen stream the client opened
        (before, with a notification any time, which _on_message reads): opened where it offers tools.listChanged."""
        session = self._client.session
        offered = getattr(
            getattr(session.server_capabilities, "tools", None), "list_changed", None
        )
        if offered and modern_protocol(session.protocol_version):
            self._listening = self._portal.start_task_soon(self._listen)

    async def _listen(self) -> None:
        try:
            async with self._client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    self.tools_changed = True
        except Exception as error:  # noqa: BLE001 - no longer told of changes: the tools are listed again once
            _log.debug(
                "%s: the tools list subscription ended: %s", self.label, _failure(error)
            )
            self.tools_changed = True

    async def _on_message(self, message: Any) -> None:
        """What the SDK hands its message handler: a line it could not read (unread.py), and notifications."""
        if isinstance(message, Exception):
            try:
                dispatcher = self._client.session._dispatcher
            except Exception:  # noqa: BLE001 - not connected yet: the handshake's own timeout says it
                dispatcher = None
            self._unreadable.seen(message, dispatcher)
        elif isinstance(message, mcp_types().ToolListChangedNotification):
            self.tools_changed = True

    def call(self, name: str, arguments: Any, timeout: float | None = None) -> Any:
        """Call the remote tool: its structuredContent, text or ContentParts (content.py); ToolFailure with the
        server's words when it answers isError, or when the server is gone."""
        try:
            result = self._portal.call(
                self._attempt, name, arguments, timeout or self.timeout
            )
        except ToolFailure:
            raise
        except Exception as error:  # noqa: BLE001 - a dead server or a broken answer is the model's to hear
            leaf = _leaf(error)
            if timed_out(leaf):
                # A TimeoutError: the registry reports it as the call's `timeout`.
                raise TimeoutError(
                    f"the MCP server {self.label} did not answer within {timeout or self.timeout} seconds"
                    f"{self._unreadable.said()}"
                ) from None
            if getattr(leaf, "code", None) == PARSE_ERROR:
                why = cut_text(str(leaf), 1000)
                raise ToolFailure(
                    f"the MCP server {self.label} sent an answer that could not be read: {why}"
                ) from None
            if self._vanished(name):
                raise ToolFailure(
                    f"the MCP server {self.label} no longer has a tool named {name!r}"
                ) from None
            raise ToolFailure(
                f"the MCP server {self.label} did not answer the call: {_failure(error)}"
            ) from None
        if result.is_error:
            # Read as text (images and resources as a line each), with its structured content if it has any.
            text = error_text(result.content, result.structured_content)
            raise ToolFailure(text.removeprefix("Error: ") or "the tool failed")
        # Text, the structured content, or ContentParts with the images, audio and resources (content.py).
        return tool_result(result.content, result.structured_content)

    def _vanished(self, name: str) -> bool:
        """Whether a failed call was to a tool the server no longer lists (False when it cannot be asked)."""
        try:
            return name not in {d["name"] for d in self.refresh()}
        except Exception:  # noqa: BLE001 - a server that cannot list either has failed in another way
            return False

    async def _attempt(self, name: str, arguments: Any, timeout: float) -> Any:
        """One call, as a task where the tool requires it; made once more after the user agrees to open the URLs
        a -32042 error names. Its answer bounded and checked (answers.py)."""
        anyio = mcp_module("anyio")
        call = self._call_task if name in self._tasks else self._call
        with self._asked.calling(name, arguments):
            try:
                result = await call(name, arguments, timeout)
            except RuntimeError as error:
                # The SDK's own check, which stays (only its validator is replaced): said as answers.py says it.
                if "did not return structured content" not in str(error):
                    raise
                raise ToolFailure(missing_structure(name)) from None
            except Exception as error:
                urls = mcp_types().URL_ELICITATION_REQUIRED
                if getattr(_leaf(error), "code", None) != urls:
                    raise
                with anyio.fail_after(timeout):
                    await self._asked.prerequisites(_leaf(error), self.label)
                result = await call(name, arguments, timeout)
        return answered(name, result, self._checks.get(name), self.max_result_bytes)

    async def _call_task(self, name: str, arguments: Any, timeout: float) -> Any:
        anyio = mcp_module("anyio")
        session, status = self._client.session, progress_callback(arguments)
        with anyio.fail_after(timeout + 1):
            # The task's status messages are its progress (progress.py takes them to the run).
            return await call_as_task(session, name, arguments, timeout, status)

    async def _call(self, name: str, arguments: Any, timeout: float) -> Any:
        anyio = mcp_module("anyio")
        self._bound_output_check(name)
        kept = self._kept
        if kept is not None:
            kept.expect()
        try:
            with anyio.fail_after(timeout + 1):
                # The server's progress for this call goes to the run the call is in (progress.py).
                return await self._client.call_tool(
                    name,
                    arguments,
                    read_timeout_seconds=timeout,
                    progress_callback=progress_callback(arguments),
                )
        except ValueError:
            # pydantic's ValidationError of the whole result (a block it does not know): its JSON is read instead.
            raw = kept.take() if kept is not None else None
            if not isinstance(raw, Mapping):
                raise
            return raw
        finally:
            if kept is not None:
                kept.take()

    def _bound_output_check(self, name: str) -> None:
        """The SDK checks a result's structuredContent against the tool's outputSchema with jsonschema, whose
        patterns run on Python's re, without a bound (a server's `^(a+)+$` would stop this process): the
        validator it keeps for the tool is made one that passes everything, before it makes its own; toolgen
        checks the result itself, bounded, for plain and task calls alike (answers.py)."""
        try:
            kept = self._client.session._tool_output_validators
        except Exception:  # noqa: BLE001 - another SDK version keeps them elsewhere; its own check runs then
            return
        if isinstance(kept, dict) and not isinstance(kept.get(name), _Unchecked):
            kept[name] = _Unchecked()

    def add_to(
        self,
        registry: Registry,
        *,
        names: Sequence[str] | None = None,
        prefix: str = "",
    ) -> list[str]:
        """Add the server's tools (all it has handlers for, or `names`) to `registry` as run-time tools named
        `prefix + name`; returns the names added. A name the registry already has is an error, not a silent
        replacement; so is a tool no provider would take (feeding.py): leave it out with `names`. The registry
        follows the server's tools list from then on, at each refresh."""
        picked = chosen(self.definitions, names)
        missing = sorted(set(names or ()) - {d["name"] for d in picked})
        if missing:
            raise MCPToolsError(f"{self.label} has no tool named {', '.join(missing)}")
        taken = sorted(
            prefix + d["name"] for d in picked if prefix + d["name"] in registry
        )
        if taken:
            raise ValueError(f"the registry already has tools named {', '.join(taken)}")
        for definition in picked:
            problem = unfit(
                prefix + definition["name"],
                definition.get("description"),
                self.max_description,
            )
            if problem is not None:
                index = [d["name"] for d in self.definitions].index(definition["name"])
                raise MCPToolsError(
                    f"{self.label}: tools[{index}] ({cut_text(definition['name'], 80)!r}): {problem[1]}; leave it"
                    " out with names=[...]",
                    (index, problem[0]),
                )
        fed = Fed(registry, tuple(names) if names is not None else None, prefix)
        for definition in picked:
            name = prefix + definition["name"]
            entry = self._add_one(registry, name, definition)
            fed.added[name] = (definition["name"], entry, definition)
        self._fed.append(fed)
        added = {prefix + d["name"]: d["name"] for d in picked}
        self._pins.tell(registry, self.label, self.drift, added)  # drift as run notes
        return [prefix + d["name"] for d in picked]

    def _add_one(
        self, registry: Registry, name: str, definition: Mapping[str, Any]
    ) -> ToolEntry[Any, Any]:
        output = definition.get("outputSchema")
        return registry.add(
            name,
            definition["inputSchema"],
            self._handler(definition["name"], definition.get("timeout")),
            description=definition.get("description"),
            output_schema=output if isinstance(output, Mapping) else None,
            # answers.py checks structuredContent, bounded; an output schema MCP's field cannot hold (not an
            # object) comes back as text, which is no result the registry could check against it.
            check_result=False,
            # The connection's limit where the server sets none: a remote call's time is bounded either way,
            # and the registry reports the limit it ran out of (`timeout`) in its own words.
            timeout=definition.get("timeout") or self.timeout,
            strict=definition.get("strict"),
            title=definition.get("title"),
            return_direct=bool(definition.get("returnDirect")),
            requires_approval=bool(definition.get("requiresApproval")),
            meta=definition.get("meta"),
            annotations=definition.get("annotations"),
            describe_meta=definition.get("describeMeta") or False,
        )

    def _catch_up(self, name: str) -> None:
        """After the server said its tools changed: list them again (the registries fed follow), before a call
        to `name`, which is refused if the server no longer has it."""
        try:
            listed = self.refresh()
        except Exception as error:  # noqa: BLE001 - said to the model, and asked again before the next call
            self.tools_changed = True
            raise ToolFailure(
                f"the MCP server {self.label} said its tools changed, and they could not be listed again:"
                f" {_failure(error)}"
            ) from None
        if name not in {d["name"] for d in listed}:
            raise ToolFailure(
                f"the MCP server {self.label} no longer has a tool named {name!r} (its tools changed; the"
                " tools offered are its new ones)"
            )

    def _handler(
        self, name: str, timeout: float | None
    ) -> Callable[[Any, ToolContext], Any]:
        def call_remote(args: Any, ctx: ToolContext) -> Any:
            if self.tools_changed:
                self._catch_up(name)
            if ctx.on_progress is not None and isinstance(args, dict):
                args = ReportingArguments(args, ctx.on_progress)  # progress requested
            return self.call(name, args, timeout)

        return call_remote

    def close(self) -> None:
        """Stop the connection (and the server process, for a command); safe to call twice."""
        client_cm, self._client_cm = self._client_cm, None
        if client_cm is None:
            return
        if self._listening is not None:
            self._listening.cancel()
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
