# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Tool registry: tools by name, tools added at run time, and the dispatch of tool calls to their handlers.

dispatch() never raises for a bad call: every failure (unknown tool, arguments that are not JSON or fail the
schema, an unbound tool, a tool requiring approval called without it, a handler exception, a timeout, a result
that fails the output schema or cannot be sent) becomes a ToolOutcome whose content tells the model what went
wrong in words it can act on. Hostile calls get the same treatment: a call that is not an object, a `function`
that is not one, arguments nested too deep or with NaN or repeated keys, a handler raising SystemExit or
KeyboardInterrupt (only an asyncio cancellation of the caller passes through). A call without a string id
gets a generated one, the same for the same call; error messages are cut to `max_error_chars`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pydantic

from ..models.base import ToolSpec
from ..models.check import schema_problems, schema_validator
from ..models.jsontext import data_problem, nesting_problem, parse_json
from ..models.problems import ToolgenValidationError, ValidationProblem
from .entry import ToolContext, ToolEntry
from .guards import (
    HandlerExit,
    ToolFailure,
    call_id_of,
    cut_text,
    guarded_async,
    guarded_sync,
    is_async_handler,
    is_timeout,
    listed_problems,
    message_of,
    quoted_name,
    sendable,
    unapproved,
)
from .outcomes import (
    ContentParts,
    ErrorKind,
    ToolError,
    ToolOutcome,
    default_converter,
    json_written,
    plain_data,
    surrogate_note,
    texted_note,
)
from .pool import HandlerPool

if TYPE_CHECKING:
    from ..wires.export import GeminiSchema


class UnboundToolsError(RuntimeError):
    """Raised by Registry.require_bound() when tools have no handler yet."""


class Registry:
    """Tools by name; create one per application (it holds handlers, so it is not module state).

    Sync handlers with a timeout, and every sync handler under adispatch(), run on the registry's own pool of
    `max_workers` daemon threads; each call's timeout counts from when its handler starts.
    """

    def __init__(
        self,
        specs: Mapping[str, ToolSpec],
        *,
        max_workers: int = 32,
        max_error_chars: int = 4000,
        require_approval: bool = True,
    ) -> None:
        # Each built tool's entry is made when first asked for: a package of thousands of tools reads a tool's
        # definition (TOOLS makes its spec on first read) only when that tool is used.
        self._specs = specs
        self._names: dict[str, None] = dict.fromkeys(specs)
        self._entries: dict[str, ToolEntry[Any, Any]] = {}
        self.pool = HandlerPool(max_workers)
        # Counts add() and remove(): the loop reads the tools again when it has moved.
        self.revision = 0
        # The longest error text sent back to the model; problems past it are counted, not listed.
        self.max_error_chars = max_error_chars
        # False: dispatch runs a tool that requires approval without ToolContext(approved=True), as it used to.
        self.require_approval = require_approval

    def entry(self, name: str) -> ToolEntry[Any, Any]:
        found = self._entries.get(name)
        if found is None:
            if name not in self._names:
                raise KeyError(name)
            # Two threads asking first at once: one entry is kept, and both get it (and its handler).
            found = self._entries.setdefault(name, ToolEntry(self._specs[name]))
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def unbound(self) -> list[str]:
        made = self._entries
        return sorted(n for n in self._names if n not in made or not made[n].bound)

    def require_bound(self) -> None:
        """Fail at start-up, not at the first call, when a tool has no handler."""
        missing = self.unbound()
        if missing:
            raise UnboundToolsError(f"tools without a handler: {', '.join(missing)}")

    def add(
        self,
        name: str,
        input_schema: Mapping[str, Any],
        handler: Callable[[Any, ToolContext], Any],
        *,
        description: str | None = None,
        output_schema: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        strict: bool | None = None,
        title: str | None = None,
        return_direct: bool = False,
        requires_approval: bool = False,
        meta: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | None = None,
        describe_meta: bool | Iterable[str] = False,
        check_result: bool = True,
    ) -> ToolEntry[Any, Any]:
        """A tool defined at run time by a JSON Schema (MCP style), checked with jsonschema like any schema.

        It carries the policies and metadata of a built tool (the loop honours them the same way) and is
        offered to the model from the next model call on. `strict: True` sends it in OpenAI strict mode, so
        null for an optional argument means absent. `describe_meta` folds meta into the description providers
        are sent: every key (True) or the keys listed. With an `output_schema`, each result (a ContentParts'
        `value`, when it has one) is checked against it, and one that fails is an `invalid_result` error, as a
        built tool's is; `check_result=False` leaves that to the handler (an MCP connection checks its own).
        """
        try:
            validator = schema_validator(dict(input_schema))
        except ImportError as error:  # pragma: no cover - the application's environment
            raise RuntimeError(
                "tools added at run time need the jsonschema package"
            ) from error

        def validate(arguments: Any, json_text: bool = True) -> Any:
            data = (
                parse_json(arguments)
                if json_text and isinstance(arguments, (str, bytes, bytearray))
                else arguments
            )
            problems = schema_problems(validator, data)
            if problems and strict is True:
                # The same reading of null as the generated tools' (ToolSpec.check_arguments).
                from ..schema.fit import drop_strict_nulls

                lenient = drop_strict_nulls(data, input_schema)
                if lenient != data:
                    data, problems = lenient, schema_problems(validator, lenient)
            if problems:
                raise ToolgenValidationError(problems)
            return data

        spec = ToolSpec(
            name=name,
            title=title,
            description=description,
            args_model=pydantic.BaseModel,
            result_model=None,
            input_schema=dict(input_schema),
            output_schema=dict(output_schema) if output_schema else None,
            check_output=bool(output_schema) and check_result,
            timeout=timeout,
            strict=strict,
            null_as_absent=strict is True,
            return_direct=return_direct,
            requires_approval=requires_approval,
            meta=dict(meta or {}),
            annotations=dict(annotations or {}),
            describe_meta=(
                describe_meta
                if isinstance(describe_meta, bool)
                else tuple(describe_meta)
            ),
        )
        entry: ToolEntry[Any, Any] = ToolEntry(spec, validate)
        entry.handler(handler)
        self._names[name] = None
        self._entries[name] = entry
        self.revision += 1
        return entry

    def remove(self, name: str) -> None:
        del self._names[name]
        self._entries.pop(name, None)
        self.revision += 1

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool, built and added at run time, as canonical definitions in name order."""
        return [self.entry(name).spec.definition() for name in self]

    def tool_definitions(
        self, provider: str, *, strict: bool = False, gemini: GeminiSchema = "json"
    ) -> list[Any]:
        """The `tools` field of a request to `provider` for every tool here, run-time ones included."""
        # Imported here: the wires' table loads with it, and dispatching needs none of it.
        from ..wires.export import export_tools

        return export_tools(
            self.definitions(), provider, strict=strict, gemini=gemini
        ).tools

    def dispatch(self, call: Any, ctx: ToolContext | None = None) -> ToolOutcome:
        """Run one tool call (a ToolCall model or its dict form) to completion; never raises for a bad call.
        A tool that requires approval runs only with ToolContext(approved=True), else the outcome is an
        `approval_required` error (unless Registry(require_approval=False)): the loop and MCP server ask first."""
        prepared = self._prepare(call, ctx)
        if isinstance(prepared, ToolOutcome):
            return prepared
        entry, handler, args, context, call_id = prepared
        timeout = entry.spec.timeout
        try:
            if is_async_handler(handler):
                # On a pool thread, with a loop of its own: a running loop in the caller's thread is no
                # obstacle, and a handler that ignores its cancellation is abandoned with its thread.
                result = self.pool.call_coroutine(
                    timeout, lambda: guarded_async(handler, args, context)
                )
            elif timeout is None:
                result = guarded_sync(handler, args, context)
            else:
                result = self.pool.call(timeout, guarded_sync, handler, args, context)
        except BaseException as error:  # noqa: BLE001 - even SystemExit from a handler is the model's to hear
            return self._handler_failure(error, call_id, entry.spec.name, timeout)
        return self._finish(entry, call_id, result)

    def dispatcher(self, call: Any, ctx: ToolContext) -> Callable[[], ToolOutcome]:
        """The call ready to run on any thread; a durable registry reserves the call's place in its workflow
        here, on the loop's thread, so that parallel calls replay in the order they were made."""
        return lambda: self.dispatch(call, ctx)

    async def adispatch(self, call: Any, ctx: ToolContext | None = None) -> ToolOutcome:
        """dispatch() for async code: async handlers are awaited, sync ones run in a thread."""
        prepared = self._prepare(call, ctx)
        if isinstance(prepared, ToolOutcome):
            return prepared
        entry, handler, args, context, call_id = prepared
        timeout = entry.spec.timeout
        import asyncio

        try:
            if is_async_handler(handler):
                result = await self.pool.await_within(
                    timeout, guarded_async(handler, args, context)
                )
            else:
                result = await self.pool.acall(
                    timeout, guarded_sync, handler, args, context
                )
        except asyncio.CancelledError:
            raise  # the caller's task is being cancelled: that is asyncio's to carry, not the model's
        except BaseException as error:  # noqa: BLE001 - even SystemExit from a handler is the model's to hear
            return self._handler_failure(error, call_id, entry.spec.name, timeout)
        return self._finish(entry, call_id, result)

    def _prepare(
        self, call: Any, ctx: ToolContext | None
    ) -> (
        ToolOutcome
        | tuple[ToolEntry[Any, Any], Callable[..., Any], Any, ToolContext, str]
    ):
        try:
            data = call.model_dump() if isinstance(call, pydantic.BaseModel) else call
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is a bad call
            data = None
        if not isinstance(data, Mapping):
            return self._failure(
                call_id_of({}, None),
                "",
                "invalid_arguments",
                f"the tool call is not an object (got {type(data).__name__})",
            )
        function = data.get("function")
        if function is None:
            function = {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = (
            function.get("arguments", "{}") if isinstance(function, Mapping) else None
        )
        call_id = call_id_of(data, arguments)
        if not isinstance(function, Mapping):
            return self._failure(
                call_id,
                "",
                "invalid_arguments",
                "the tool call's `function` is not an object with `name` and"
                f" `arguments` (got {type(function).__name__})",
            )
        if not isinstance(name, str):
            name = ""
        entry = self.entry(name) if name in self._names else None
        if entry is None:
            known = ", ".join(sorted(self._names)) or "none"
            return self._failure(
                call_id,
                name,
                "unknown_tool",
                f"there is no tool named {quoted_name(name)}; the tools are: {known}",
            )
        handler = entry._handler
        if handler is None:
            return self._failure(
                call_id,
                name,
                "unbound",
                f"no handler is bound for the tool {name!r}, so it did not run",
            )
        approved = not self.require_approval or bool(ctx and ctx.approved)
        if entry.spec.requires_approval and not approved:
            return self._failure(call_id, name, "approval_required", unapproved(name))
        if isinstance(arguments, str) and not arguments.strip():
            # Some providers send an empty string for a call without arguments.
            arguments = "{}"
        if isinstance(arguments, (str, bytes, bytearray)):
            try:
                arguments = parse_json(arguments)
            except ToolgenValidationError as error:
                return self._problems_failure(
                    call_id,
                    name,
                    "invalid_json",
                    "the arguments are not valid JSON",
                    error.problems,
                )
        try:
            # Text was parsed strictly above; data handed over as it is must be JSON data just the same.
            unfit = data_problem(arguments)
            if unfit is not None:
                raise ToolgenValidationError([unfit])
            args = entry.parse(arguments, json_text=False)
        except ToolgenValidationError as error:
            return self._problems_failure(
                call_id,
                name,
                "invalid_arguments",
                "the arguments were not accepted",
                error.problems,
            )
        except Exception as error:  # noqa: BLE001 - a validator that breaks must not break the run
            return self._failure(
                call_id,
                name,
                "invalid_arguments",
                f"the arguments could not be checked: {type(error).__name__}: {error}",
            )
        context = ToolContext(
            conversation_id=ctx.conversation_id if ctx else None,
            tool_call_id=call_id,
            tool=entry.spec,
            values=ctx.values if ctx else {},
            on_progress=ctx.on_progress if ctx else None,
            approved=bool(ctx and ctx.approved),
        )
        return entry, handler, args, context, call_id

    def _finish(
        self, entry: ToolEntry[Any, Any], call_id: str, result: Any
    ) -> ToolOutcome:
        spec = entry.spec
        try:
            return self._checked(entry, call_id, result)
        except ToolgenValidationError as error:
            return self._problems_failure(
                call_id,
                spec.name,
                "invalid_result",
                "the tool returned a result its schema does not allow",
                error.problems,
            )
        except BaseException as error:
            # A converter or check that breaks is reported, not raised.
            import asyncio

            if isinstance(error, asyncio.CancelledError):
                raise  # the caller's task is being cancelled: asyncio's to carry
            # Even SystemExit from a converter (or from a result's __str__) is the model's to hear, as a handler's is.
            return self._failure(
                call_id,
                spec.name,
                "invalid_result",
                "the tool's result could not be sent back:"
                f" {type(error).__name__}: {message_of(error)}",
            )

    def _checked(
        self, entry: ToolEntry[Any, Any], call_id: str, result: Any
    ) -> ToolOutcome:
        """The outcome of a result: checked against the output schema, converted, made sendable."""
        spec = entry.spec
        typed = spec.result_model is not None and isinstance(result, spec.result_model)
        if isinstance(result, ContentParts) and spec.result_model is None:
            # A run-time tool's parts: the data they stand for is what its output schema describes.
            if spec.check_output and result.value is not None:
                self._check_plain(spec, result.value)
        elif (spec.result_model is not None and not typed) or spec.check_output:
            if typed:  # the model validated it when it was built: only the JSON Schema check is left
                checked = spec.check_result_schema(
                    result.model_dump(mode="json", by_alias=True)
                )
            else:
                checked = self._check_plain(spec, result)
            result = result if typed else checked
        notes: tuple[str, ...] = ()
        content: str | list[Any]
        if entry.converter is default_converter and not isinstance(
            result, (str, ContentParts, pydantic.BaseModel)
        ):
            content, texted = json_written(result)
            if texted:
                notes = (texted_note(entry.spec.name, texted),)
        else:
            content = entry.converter(result)
        if isinstance(content, str):
            sent = sendable(content)
            if sent is not content:  # only when a lone surrogate was replaced
                notes = (*notes, surrogate_note(entry.spec.name, result))
            content = sent
        elif isinstance(content, list):
            # Content parts go out as JSON: they must be JSON now, not when the request is built.
            json.dumps(content, allow_nan=False).encode("utf-8")
        else:
            raise TypeError(
                f"the result converter returned {type(content).__name__}, not text or a list of parts"
            )
        return ToolOutcome(call_id, entry.spec.name, content, result, None, notes)

    @staticmethod
    def _check_plain(spec: ToolSpec, result: Any) -> Any:
        plain = plain_data(result)
        deep = nesting_problem(plain)
        if deep is not None:
            raise ToolgenValidationError([deep])
        return spec.check_result(plain)

    def _handler_failure(
        self, error: BaseException, call_id: str, name: str, timeout: float | None
    ) -> ToolOutcome:
        if isinstance(error, HandlerExit):
            error = error.original
        if isinstance(error, ToolFailure):
            return self._failure(
                call_id, name, "handler_error", message_of(error) or "the tool failed"
            )
        if is_timeout(error):
            return self._failure(
                call_id,
                name,
                "timeout",
                f"the tool did not finish within {timeout} seconds",
            )
        return self._failure(
            call_id,
            name,
            "handler_error",
            f"the tool failed: {type(error).__name__}: {message_of(error)}",
        )

    def _problems_failure(
        self,
        call_id: str,
        name: str,
        kind: ErrorKind,
        intro: str,
        problems: tuple[ValidationProblem, ...],
    ) -> ToolOutcome:
        """A failure listing `problems` after `intro`, as many as fit; the rest counted."""
        message = listed_problems(intro, problems, self.max_error_chars)
        return self._failure(call_id, name, kind, message, problems)

    def _failure(
        self,
        call_id: str,
        name: str,
        kind: ErrorKind,
        message: str,
        problems: tuple[ValidationProblem, ...] = (),
    ) -> ToolOutcome:
        # "Error: " is part of what the model reads, so it counts toward the limit.
        cut = cut_text(message, max(self.max_error_chars - 7, 60))
        message = sendable(cut)
        return ToolOutcome(
            call_id,
            name,
            f"Error: {message}",
            None,
            ToolError(kind, message, problems),
            ()
            if message is cut
            else (
                f"{name}'s error: a lone surrogate in its message was sent as U+FFFD",
            ),
        )
