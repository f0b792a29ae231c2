# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One tool of a registry: its definition, handler and result converter, and the context its handler is given."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..models.base import ToolSpec
from ..models.check import check
from ..models.problems import ToolgenValidationError, ValidationProblem
from .guards import is_async_handler
from .outcomes import default_converter
from .progress import ProgressSink, report_progress

A = TypeVar("A")
R = TypeVar("R")


@dataclass(frozen=True)
class ToolContext:
    """What a handler knows besides its arguments: the conversation, the call, the tool, and user values."""

    conversation_id: str | None = None
    tool_call_id: str | None = None
    tool: ToolSpec | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    # Where report_progress() sends this call's reports: the run's, set by the loop, or the MCP client's, set by
    # the MCP server for a call with a progress token; None otherwise.
    on_progress: ProgressSink | None = field(default=None, repr=False, compare=False)
    # The caller asked and the call was approved: only then does dispatch run a tool that requires approval.
    approved: bool = False

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the run how far this call has got (tools/progress.py); never raises, a no-op where no one listens."""
        report_progress(self.on_progress, progress, total, message)


class ToolEntry(Generic[A, R]):
    """One tool: its definition and, once bound, its handler and result converter."""

    def __init__(
        self, spec: ToolSpec, validate_args: Callable[[Any, bool], Any] | None = None
    ) -> None:
        self.spec = spec
        self._validate_args = validate_args
        self._handler: Callable[..., Any] | None = None
        self.converter: Callable[[Any], str | list[Any]] = default_converter

    def handler(
        self,
        function: Callable[[A, ToolContext], R]
        | Callable[[A, ToolContext], Awaitable[R]],
    ) -> Any:
        """Bind `function(args, ctx)`, sync or async; returns it unchanged, so it works as a decorator."""
        self._handler = function
        return function

    def result_converter(
        self, function: Callable[[R], str | list[Any]]
    ) -> Callable[[R], str | list[Any]]:
        """Replace the default JSON text with your own text or content parts."""
        self.converter = function
        return function

    @property
    def bound(self) -> bool:
        return self._handler is not None

    @property
    def is_async(self) -> bool:
        """Whether the bound handler is async (awaited on the caller's event loop), not sync."""
        return self._handler is not None and is_async_handler(self._handler)

    def parse(self, arguments: Any, *, json_text: bool = True) -> Any:
        """Validated arguments: the args model, or the data itself for a run-time tool. With `json_text`, a str or
        bytes is JSON text to parse first; without it, the data as parsed (a string is then the arguments
        themselves, for a tool whose input schema is a string)."""
        if self._validate_args is not None:
            return self._validate_args(arguments, json_text)
        args = self.spec.check_arguments(arguments, json_text=json_text)
        if not isinstance(args, self.spec.args_model):
            raise ToolgenValidationError(self._unheld(args))
        return args

    def _unheld(self, data: Any) -> list[ValidationProblem]:
        """Why the handler cannot take arguments the input schema accepts: what its model cannot hold."""
        model = self.spec.args_model.__name__
        try:
            check(self.spec.args_model, data, json_text=False)
        except ToolgenValidationError as error:
            reason = f"fits the input schema, but {model}, which the handler takes, cannot hold it"
            return [
                ValidationProblem(p.pointer, f"{p.message}; it {reason}")
                for p in error.problems
            ]
        return [ValidationProblem("", f"is not a {model}")]  # pragma: no cover
