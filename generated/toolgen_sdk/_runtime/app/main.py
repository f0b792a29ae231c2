# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The command line of a generated package, `python -m <package> "prompt"`: the agent loop against an endpoint, or
offline with the prompt-following scripted model (and the demo handlers, in packages that carry the demo)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..clients.base import ModelClient
from ..clients.http import HTTPModel
from ..clients.retry import error_text
from ..extras import MissingExtra
from ..loop.events import RunEvent, sse_encode
from ..loop.policies import Approval, ApprovalRequest
from ..loop.sync_driver import run
from ..tools.loading import ToolsLoadError
from ..tools.registry import Registry
from ..wires.canonical import ProviderError
from ..wires.settings import UnsupportedSettings
from .binding import bind_demo, chosen_registry
from .endpoint import add_endpoint_options, endpoint_model, run_settings
from .prompted import prompted_model

# The `error` types of a model call whose stream broke off (loop/recovery.py), asked again when its run says so.
_BROKE_OFF = frozenset({"cut", "incomplete", "corrupt", "incomplete_stream"})


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the agent loop with this package's tools: offline with a scripted model by default, "
        "or against a model endpoint with --base-url. `mcp` instead of a prompt serves the tools over MCP "
        "(see `mcp --help`).",
    )
    parser.add_argument("prompt", help="what to ask")
    parser.add_argument(
        "--tools",
        metavar="MODULE:ATTRIBUTE",
        help="your bound tools: a Tools instance, or a function returning one "
        "(e.g. myapp.handlers:tools); without it the tools have no handlers "
        "(but the demo's)",
    )
    add_endpoint_options(parser)
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="write each exchange with the endpoint into DIR, secrets masked, for replay and conformance",
    )
    parser.add_argument("--system", help="a system message")
    parser.add_argument(
        "--stream", action="store_true", help="stream the answer as it is written"
    )
    parser.add_argument(
        "--events",
        action="store_true",
        help="print every run event as text/event-stream (SSE)",
    )
    parser.add_argument(
        "--max-steps", type=int, default=8, help="model calls at most (default 8)"
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="approve every call to a tool that requires approval",
    )
    parser.add_argument(
        "--workspace",
        help="run_command's directory (default: a temporary one with a sample file)",
    )
    return parser


def _model(options: argparse.Namespace, parser: argparse.ArgumentParser) -> ModelClient:
    if not options.base_url and options.record:
        parser.error(
            "--record needs --base-url: only an endpoint's exchanges are recorded"
        )
    return endpoint_model(options, parser, prompted_model, record=options.record)


def _approver(auto: bool, out: IO[str]) -> Callable[[ApprovalRequest], Approval]:
    def approve(request: ApprovalRequest) -> Approval:
        if auto:
            return Approval.approve()
        if not sys.stdin.isatty():
            return Approval.deny(
                "no one was there to approve it (run with --yes to approve such calls)"
            )
        out.write(f"Allow {request.name}({request.arguments})? [y/N] ")
        out.flush()
        answer = sys.stdin.readline().strip().lower()
        return (
            Approval.approve()
            if answer in ("y", "yes")
            else Approval.deny("the user said no")
        )

    return approve


class _Printer:
    """What the command line shows of the run's events: all of them as SSE, or the answer as it streams."""

    def __init__(
        self,
        options: argparse.Namespace,
        out: IO[str],
        err: IO[str] | None = None,
        unbound: Callable[[str], str] | None = None,
    ) -> None:
        self.options = options
        self.out = out
        # Notes go beside the answer, not into it: a setting left out, content moved for the wire.
        self.err = err
        # How to bind a handler to a tool called without one: said once a tool, beside the answer.
        self.unbound = unbound
        self.told: set[str] = set()
        self.open_line = False
        # Whether the model call in flight has printed text: a stream that breaks off leaves it on the screen.
        self.shown = False

    def __call__(self, event: RunEvent) -> None:
        if self.options.events:
            self.out.write(sse_encode(event))
        elif self.options.stream and event.type == "text_delta":
            self.out.write(str(event.data.get("text", "")))
            self.open_line = self.shown = True
        elif event.type == "model_call_started":
            self.shown = False
        elif event.type == "error" and event.data.get("retry") and self.err:
            # Asked again: said beside the answer, so that two attempts' text never reads as one answer.
            self.out.flush()
            self.err.write(self._retry_line(event.data))
            self.err.flush()
        elif (
            self.options.stream
            and event.type == "model_call_finished"
            and self.open_line
        ):
            self.out.write("\n")
            self.open_line = False
        elif event.type == "note" and self.err is not None:
            self.err.write(f"note: {event.data.get('message')}\n")
            self.err.flush()
        elif (
            event.type == "tool_call_finished"
            and event.data.get("error_kind") == "unbound"
            and self.unbound is not None
            and self.err is not None
        ):
            name = str(event.data.get("name", ""))
            if name not in self.told:
                self.told.add(name)
                self.err.write(f"note: {self.unbound(name)}\n")
                self.err.flush()
        self.out.flush()

    def _retry_line(self, data: Mapping[str, Any]) -> str:
        message, attempt = data.get("message"), data.get("retry")
        if data.get("type") not in _BROKE_OFF:
            return f"retrying (attempt {attempt}): {message}\n"
        shown = ", after the text above" if self.options.stream and self.shown else ""
        return (
            f"the answer's stream broke off{shown} ({message}):"
            f" asking the model again (attempt {attempt})\n"
        )


def _unbound_note(registry: Registry, spec: str | None) -> Callable[[str], str]:
    """What to say of a tool called without a handler: which one, and how to bind one (docs/agent-loop.md)."""
    # Bound before the run: the demo's handlers, when the package has them and no --tools was given.
    demo = not spec and len(registry.unbound()) < len(list(registry))

    def explain(name: str) -> str:
        bind = f"@{_attribute(registry, name)}.handler"
        if spec:
            return (
                f"no handler is bound for the tool {name!r} in --tools {spec}: "
                f"bind one there with {bind}"
            )
        why = (
            "the demo's handlers cover the example tools only"
            if demo
            else "without --tools, the tools have no handlers"
        )
        return (
            f"no handler is bound for the tool {name!r} ({why}): bind one with {bind} "
            "on a Tools() of yours and pass it with --tools module:attribute"
        )

    return explain


def _attribute(registry: Registry, name: str) -> str:
    """`tools.<attribute>` of a tool: its snake_case name when the package's Tools has it for this tool, else
    `tools.entry(name)` (a tool whose attribute was numbered, or one added at run time)."""
    attribute = re.sub(r"\W", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)).lower()
    if isinstance(getattr(type(registry), attribute, None), property):
        entry = getattr(registry, attribute, None)
        if getattr(getattr(entry, "spec", None), "name", None) == name:
            return f"tools.{attribute}"
    return f"tools.entry({name!r})"


def _registry(
    options: argparse.Namespace,
    parser: argparse.ArgumentParser,
    make_registry: Callable[[], Registry],
) -> Registry:
    try:
        return chosen_registry(options.tools, make_registry)
    except ToolsLoadError as error:
        parser.error(str(error))


def main(
    argv: Sequence[str] | None, make_registry: Callable[[], Registry], *, prog: str
) -> int:
    """`python -m <package> "prompt" [options]`: 0 when the run finished, 1 when it stopped otherwise.

    `python -m <package> mcp [options]` serves the tools over MCP instead, `serve` runs the HTTP service
    (`-- mcp` asks the prompt "mcp"). An optional package that is missing (httpx for --base-url, the `serve`
    or `mcp` extra) is one line naming the extra to install, and 4.
    """
    try:
        return _main(list(sys.argv[1:] if argv is None else argv), make_registry, prog)
    except MissingExtra as error:
        sys.stderr.write(f"{prog}: {error}\n")
        return 4


def _main(
    arguments: list[str], make_registry: Callable[[], Registry], prog: str
) -> int:
    if arguments[:1] == ["serve"]:
        # Imported here: only the service needs its module (and the `serve` extra behind it).
        from .serving import serve_main

        return serve_main(arguments[1:], make_registry, prog=prog)
    if arguments[:1] == ["mcp"]:
        from .serve_mcp import mcp_main

        return mcp_main(arguments[1:], make_registry, prog=f"{prog} mcp")
    try:
        return _prompt_main(arguments, make_registry, prog)
    except BrokenPipeError:
        # The reader left (`| head`): stop as Unix tools do, without a traceback, and let Python's final flush of
        # stdout go nowhere rather than fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13  # SIGPIPE's status


def _prompt_main(
    arguments: list[str], make_registry: Callable[[], Registry], prog: str
) -> int:
    parser = _parser(prog)
    options = parser.parse_args(arguments)
    registry = _registry(options, parser, make_registry)
    out, err = sys.stdout, sys.stderr
    with tempfile.TemporaryDirectory(prefix="toolgen-workspace-") as scratch:
        if not options.tools:
            bind_demo(registry, options.workspace, Path(scratch))
        model = _model(options, parser)
        messages = (
            [{"role": "system", "content": options.system}] if options.system else []
        )
        messages.append({"role": "user", "content": options.prompt})
        try:
            result = run(
                messages,
                model,
                registry,
                stream=options.stream,
                max_steps=options.max_steps,
                settings=run_settings(options, parser),
                on_unsupported=options.on_unsupported,
                approve=_approver(options.yes, err),
                on_event=_Printer(
                    options, out, err, _unbound_note(registry, options.tools)
                ),
                # `python -m <package>`: the run's invoke_agent span is named after the package.
                agent_name=prog.rsplit(" ", 1)[-1],
            )
        except UnsupportedSettings as error:
            parser.error(str(error))
        finally:
            if isinstance(model, HTTPModel):
                model.close()
    if not options.events and (
        not options.stream or result.stop_reason == "return_direct"
    ):
        out.write(f"{result.text or ''}\n")
    if result.stop_reason in ("finished", "return_direct"):
        return 0
    problem = (
        error_text(result.error)
        if isinstance(result.error, ProviderError)
        else result.error
    )
    err.write(f"stopped: {result.stop_reason}{f': {problem}' if problem else ''}\n")
    return 1
