# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The offline demo behind `python -m <package> "prompt"`: demo handlers, a scripted model, and the command line.

Demo handlers are bound only to tools with the built-in example names: get_current_weather (fixed fake data),
show_order_status (a fixed status), todo_write/todo_read (an in-memory list per conversation id) and run_command
(a sandbox: an allowlisted program with an argument list, never a shell, inside a workspace directory, with a
timeout and an output cap). Without --base-url the model is scripted: it calls the tools the prompt asks about
(or the first tool, with example arguments) and then reports what they returned.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

import pydantic

from ..clients.base import ModelClient
from ..clients.http import ROUTES, HTTPModel
from ..clients.scripted import ScriptedModel, assistant_turn, tool_call
from ..loop.events import RunEvent, sse_encode
from ..loop.policies import Approval, ApprovalRequest
from ..loop.sync_driver import run
from ..tools.registry import Registry, ToolContext
from ..wires.base import ProviderError, Request, parts_of

DEMO_TOOLS = (
    "get_current_weather",
    "run_command",
    "show_order_status",
    "todo_read",
    "todo_write",
)

# ---- run_command's sandbox ----

# For each allowed program: the option letters it may take alone, and those whose value follows (`-n 5`, `-n5`).
# Anything else, long options included, is refused: `grep --file=/etc/passwd` would read outside the workspace.
PROGRAM_OPTIONS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "cat": ("bnsA", ""),
        "date": ("u", ""),
        "echo": ("", ""),  # options or not, echo only prints its arguments
        "grep": ("cEFHhilnorvwx", "em"),
        "head": ("", "nc"),
        "ls": ("1aAlhRrSt", ""),
        "pwd": ("", ""),
        "tail": ("", "nc"),
        "wc": ("clmw", ""),
    }
)
# Programs are looked up here only, so a file the model managed to write into the workspace is never run.
SAFE_PATH = "/usr/bin:/bin"


class SandboxRefusal(ValueError):
    """run_command refused a command; the message says why, in words the model can act on."""


class CommandTimeout(RuntimeError):
    """The program ran past the sandbox's timeout and was stopped."""


@dataclass(frozen=True)
class Sandbox:
    """Runs one allowlisted program with an argument list inside `root`: no shell, so no pipes, globs or `$()`.

    Every operand that names a file, and the working directory, must resolve (symlinks followed) inside `root`;
    the program gets a minimal environment, no stdin, `timeout` seconds, and `output_cap` bytes of each output.
    """

    root: Path
    programs: frozenset[str] = frozenset(PROGRAM_OPTIONS)
    timeout: float = 10.0
    output_cap: int = 65536

    def run(
        self, program: str, args: Sequence[str] = (), cwd: str = "."
    ) -> dict[str, Any]:
        if (
            isinstance(args, (str, bytes))
            or not all(isinstance(a, str) for a in args)
            or not isinstance(cwd, str)
        ):
            # A string would be split into characters; a list of words is the only form that means one thing.
            raise SandboxRefusal("args must be a list of strings and cwd a string")
        executable = self._executable(program)
        root = self.root.resolve()
        directory = self._inside(root, root, cwd, "the working directory")
        if not directory.is_dir():
            raise SandboxRefusal(
                f"the working directory {cwd!r} does not exist in the workspace"
            )
        self.check_arguments(program, list(args), root, directory)
        return self._execute([executable, *args], directory, program)

    def _executable(self, program: str) -> str:
        if program not in self.programs or program not in PROGRAM_OPTIONS:
            allowed = ", ".join(sorted(self.programs & PROGRAM_OPTIONS.keys()))
            raise SandboxRefusal(
                f"{program!r} is not an allowed program; allowed: {allowed}"
            )
        found = shutil.which(program, path=SAFE_PATH)
        if found is None:
            raise SandboxRefusal(f"{program!r} is not available on this system")
        return found

    def check_arguments(
        self, program: str, args: list[str], root: Path, directory: Path
    ) -> None:
        """Refuse options outside the program's list and file operands outside the workspace."""
        if any("\x00" in arg for arg in args):
            raise SandboxRefusal("an argument contains a NUL character")
        if program == "echo":
            return  # echo reads no file and runs nothing: every argument is a word to print
        flags, valued = PROGRAM_OPTIONS[program]
        operands: list[str] = []
        pattern_given = False
        position = 0
        while position < len(args):
            arg = args[position]
            position += 1
            if arg == "--":
                operands.extend(args[position:])
                break
            if arg.startswith("--"):
                raise SandboxRefusal(
                    f"long options such as {arg.split('=')[0]!r} are not allowed"
                )
            if arg.startswith("-") and len(arg) > 1:
                takes_next, pattern = _short_options(program, arg, flags, valued)
                pattern_given = pattern_given or pattern
                position += takes_next
                continue
            operands.append(arg)
        for operand in _file_operands(program, operands, pattern_given):
            self._inside(root, directory, operand, "a file argument")

    @staticmethod
    def _inside(root: Path, directory: Path, name: str, what: str) -> Path:
        """`name` resolved against `directory`, or a refusal when it leaves the workspace (`..`, absolute, link)."""
        candidate = Path(name)
        resolved = (
            candidate if candidate.is_absolute() else directory / candidate
        ).resolve()
        if resolved != root and root not in resolved.parents:
            raise SandboxRefusal(
                f"{what} {name!r} is outside the workspace; use paths inside it"
            )
        return resolved

    def _execute(
        self, argv: list[str], directory: Path, program: str
    ) -> dict[str, Any]:
        environment = {"PATH": SAFE_PATH, "LC_ALL": "C", "HOME": str(directory)}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            # Output goes to files, not pipes: a chatty program cannot fill memory, and only the cap is read back.
            process = subprocess.Popen(  # argv list, no shell, allowlisted program
                argv,
                cwd=directory,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                shell=False,
            )
            code = self._wait(process, program, out, err)
            stdout, cut_out = _head(out, self.output_cap)
            stderr, cut_err = _head(err, self.output_cap)
        return {
            "exit_code": code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": cut_out or cut_err,
        }

    def _wait(
        self,
        process: subprocess.Popen[bytes],
        program: str,
        out: IO[bytes],
        err: IO[bytes],
    ) -> int:
        """The exit code; a program past the time limit, or writing far past the output cap, is stopped."""
        deadline = time.monotonic() + self.timeout
        # Only the cap is read back, so what is written beyond a few caps is waste (and disk): stop it there.
        limit = 4 * self.output_cap
        while True:
            try:
                return process.wait(timeout=0.01)
            except subprocess.TimeoutExpired:
                written = (
                    os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
                )
                if written > limit:
                    process.kill()
                    process.wait()
                    return -9
                if time.monotonic() > deadline:
                    process.kill()
                    process.wait()
                    raise CommandTimeout(
                        f"{program} did not finish within {self.timeout} seconds and was stopped"
                    ) from None


def _short_options(program: str, arg: str, flags: str, valued: str) -> tuple[int, bool]:
    """Check `-abc` / `-n5` style options; (arguments the option consumes after itself, whether it gave a pattern)."""
    letters = arg[1:]
    for index, letter in enumerate(letters):
        if letter in valued:
            attached = index + 1 < len(letters)
            return (0 if attached else 1), letter == "e"
        if letter not in flags:
            raise SandboxRefusal(f"option -{letter} is not allowed for {program}")
    return 0, False


def _file_operands(program: str, operands: list[str], pattern_given: bool) -> list[str]:
    """The operands that name files: date's is a +FORMAT, grep's first the pattern (unless -e gave one)."""
    if program in ("date", "pwd"):
        for operand in operands:
            if program == "pwd" or not operand.startswith("+"):
                raise SandboxRefusal(f"{program} takes no argument {operand!r} here")
        return []
    if program == "grep" and not pattern_given:
        return operands[1:]
    return operands


def _head(stream: IO[bytes], cap: int) -> tuple[str, bool]:
    stream.seek(0)
    data = stream.read(cap + 1)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


# ---- demo handlers ----


@dataclass
class TodoStore:
    """To-do lists by conversation id; one store per registry, never module state."""

    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, conversation_id: str, todos: list[dict[str, Any]]) -> int:
        with self.lock:
            self.lists[conversation_id] = [dict(t) for t in todos]
        return len(todos)

    def read(self, conversation_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(t) for t in self.lists.get(conversation_id, [])]


def _data(args: Any) -> dict[str, Any]:
    if isinstance(args, pydantic.BaseModel):
        dumped: dict[str, Any] = args.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return dumped
    return dict(args) if isinstance(args, Mapping) else {}


def _weather(args: Any, ctx: ToolContext) -> dict[str, Any]:
    data = _data(args)
    unit = data.get("unit") or "celsius"
    temperature = 18.0 if unit == "celsius" else 64.4
    return {
        "location": str(data.get("location", "")),
        "temperature": temperature,
        "unit": unit,
        "conditions": "sunny",
    }


def _order_status(args: Any, ctx: ToolContext) -> str:
    return f"Order {_data(args).get('order_id', '?')}: shipped, arriving in 2 days."


def _conversation(ctx: ToolContext) -> str:
    # The list belongs to the conversation the loop says this is, never to one the model names.
    return ctx.conversation_id or "default"


def bind_demo_handlers(
    registry: Registry, workspace: Path, *, sandbox: Sandbox | None = None
) -> list[str]:
    """Bind the demo handlers to the registry's unbound tools that have a demo name; the names bound."""
    store = TodoStore()
    spec = registry.entry("run_command").spec if "run_command" in registry else None
    cap = (spec.meta.get("sandbox") or {}).get("output_cap_bytes") if spec else None
    shell = sandbox or Sandbox(
        workspace, output_cap=cap if isinstance(cap, int) else 65536
    )

    def run_command(args: Any, ctx: ToolContext) -> dict[str, Any]:
        data = _data(args)
        return shell.run(
            str(data.get("program", "")), data.get("args") or [], data.get("cwd", ".")
        )

    def todo_write(args: Any, ctx: ToolContext) -> dict[str, Any]:
        return {
            "count": store.write(
                _conversation(ctx), list(_data(args).get("todos") or [])
            )
        }

    def todo_read(args: Any, ctx: ToolContext) -> dict[str, Any]:
        return {"todos": store.read(_conversation(ctx))}

    handlers: dict[str, Callable[[Any, ToolContext], Any]] = {
        "get_current_weather": _weather,
        "run_command": run_command,
        "show_order_status": _order_status,
        "todo_read": todo_read,
        "todo_write": todo_write,
    }
    bound = []
    for name, handler in handlers.items():
        if name in registry and not registry.entry(name).bound:
            registry.entry(name).handler(handler)
            bound.append(name)
    return bound


# ---- the scripted demo model ----

_PLACE = re.compile(
    r"\b(?:in|for|at)\s+([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*(?:(?:,\s*|\s+and\s+)[A-Z][\w.'-]*)*)"
)
_ORDER_ID = re.compile(r"\b[A-Z0-9][A-Z0-9-]{5,31}\b")


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            texts = [
                p.get("text", "")
                for p in parts_of(message.get("content"))
                if p.get("type") == "text"
            ]
            return " ".join(str(t) for t in texts)
    return ""


def _places(prompt: str) -> list[str]:
    found = _PLACE.search(prompt)
    if not found:
        return ["Paris"]
    return [p.strip() for p in re.split(r",|\band\b", found.group(1)) if p.strip()] or [
        "Paris"
    ]


def example_arguments(schema: Mapping[str, Any]) -> Any:
    """The smallest value a schema's required parts ask for: a default, the first enum value, or a placeholder."""
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = (
        next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    )
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        required = [name for name in schema.get("required") or [] if name in properties]
        return {name: example_arguments(properties[name]) for name in required}
    placeholders = {
        "string": "example",
        "integer": 1,
        "number": 1,
        "boolean": False,
        "array": [],
        "null": None,
    }
    return placeholders.get(str(kind), "example")


def _demo_calls(
    prompt: str, tools: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The calls a helpful model would make for this prompt, among the tools offered."""
    calls: list[dict[str, Any]] = []
    if "get_current_weather" in tools and re.search(
        r"weather|temperature|forecast", prompt, re.IGNORECASE
    ):
        calls += [
            tool_call("get_current_weather", {"location": place})
            for place in _places(prompt)
        ]
    if "show_order_status" in tools and re.search(r"\border", prompt, re.IGNORECASE):
        found = _ORDER_ID.search(prompt)
        calls.append(
            tool_call(
                "show_order_status",
                {"order_id": found.group(0) if found else "ORD-12345"},
            )
        )
    if "todo_write" in tools and re.search(r"\bto-?do|\btask", prompt, re.IGNORECASE):
        todo = {"id": "1", "content": prompt or "try the demo", "status": "pending"}
        calls.append(tool_call("todo_write", {"todos": [todo]}))
    if "run_command" in tools and re.search(
        r"\b(ls|files|command|directory|workspace)\b", prompt, re.IGNORECASE
    ):
        calls.append(tool_call("run_command", {"program": "ls", "args": ["-l"]}))
    if not calls and tools:
        name = min(tools)
        calls.append(
            tool_call(name, example_arguments(tools[name].get("inputSchema") or {}))
        )
    return calls


def _plan(request: Request) -> dict[str, Any]:
    tools = {str(t.get("name")): t for t in request.tools}
    calls = _demo_calls(_last_user_text(request.messages), tools)
    if not calls:
        return assistant_turn(
            "This project defines no tools, so the offline demo model has nothing to call."
        )
    return assistant_turn(None, *calls)


def _describe(content: Any) -> str:
    text = (
        content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    )
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items())
    return text


def _report(request: Request) -> str:
    """The answer after the tools ran: what each returned or why it failed."""
    results = []
    for message in reversed(request.messages):
        if message.get("role") != "tool":
            break
        name = message.get("name") or "tool"
        verb = "failed" if message.get("is_error") else "returned"
        results.append(f"- {name} {verb}: {_describe(message.get('content'))}")
    lines = "\n".join(reversed(results))
    return f"Offline demo (a scripted model, no LLM was called). The tools answered:\n{lines}"


def demo_model() -> ScriptedModel:
    """The offline model: calls the tools the prompt asks about, then reports what they returned."""
    return ScriptedModel([_plan, _report])


# ---- the command line ----


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the agent loop with this package's tools: offline with a scripted model by default, "
        "or against a model endpoint with --base-url.",
    )
    parser.add_argument("prompt", help="what to ask")
    parser.add_argument(
        "--base-url",
        help="the endpoint (the official SDK's base URL, e.g. http://localhost:8000/v1)",
    )
    parser.add_argument("--model", help="the model name, required with --base-url")
    parser.add_argument(
        "--wire",
        default="openai-chat",
        choices=sorted(ROUTES),
        help="the endpoint's API format",
    )
    parser.add_argument(
        "--api-key-env",
        help="environment variable holding the API key (default by wire)",
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


_KEY_VARIABLES = MappingProxyType(
    {
        "openai-chat": "OPENAI_API_KEY",
        "openai-responses": "OPENAI_API_KEY",
        "anthropic": "ANTHROPIC_API_KEY",
        "gemini": "GEMINI_API_KEY",
        "mistral": "MISTRAL_API_KEY",
        "cohere": "CO_API_KEY",
        "ollama": "OLLAMA_API_KEY",
    }
)


def _model(options: argparse.Namespace, parser: argparse.ArgumentParser) -> ModelClient:
    if not options.base_url:
        return demo_model()
    if not options.model:
        parser.error("--model is required with --base-url")
    variable = options.api_key_env or _KEY_VARIABLES.get(options.wire, "")
    return HTTPModel(
        options.base_url,
        options.model,
        wire=options.wire,
        api_key=os.environ.get(variable) or None,
    )


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

    def __init__(self, options: argparse.Namespace, out: IO[str]) -> None:
        self.options = options
        self.out = out
        self.open_line = False

    def __call__(self, event: RunEvent) -> None:
        if self.options.events:
            self.out.write(sse_encode(event))
        elif self.options.stream and event.type == "text_delta":
            self.out.write(str(event.data.get("text", "")))
            self.open_line = True
        elif (
            self.options.stream
            and event.type == "model_call_finished"
            and self.open_line
        ):
            self.out.write("\n")
            self.open_line = False
        self.out.flush()


def _sample_workspace(directory: Path) -> Path:
    (directory / "notes.txt").write_text(
        "Files here are what run_command can see.\n", encoding="utf-8"
    )
    return directory


def main(
    argv: Sequence[str] | None, make_registry: Callable[[], Registry], *, prog: str
) -> int:
    """`python -m <package> "prompt" [options]`: 0 when the run finished, 1 when it stopped otherwise."""
    parser = _parser(prog)
    options = parser.parse_args(argv)
    registry = make_registry()
    out, err = sys.stdout, sys.stderr
    with tempfile.TemporaryDirectory(prefix="toolgen-workspace-") as scratch:
        workspace = (
            Path(options.workspace)
            if options.workspace
            else _sample_workspace(Path(scratch))
        )
        bind_demo_handlers(registry, workspace)
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
                approve=_approver(options.yes, err),
                on_event=_Printer(options, out),
            )
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
        result.error.message
        if isinstance(result.error, ProviderError)
        else result.error
    )
    err.write(f"stopped: {result.stop_reason}{f': {problem}' if problem else ''}\n")
    return 1
