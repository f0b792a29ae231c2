"""Package target: tools registry, validators and __init__ from templates, plus the copied runtime."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from toolgen.ir import Project, thaw
from toolgen.names import NameRegistry, snake
from toolgen.resources import templates_dir

RUNTIME_DIR = Path(__file__).resolve().parents[1] / "runtime"
# Where the runtime goes inside a generated package; the formatter leaves it as toolgen wrote it.
RUNTIME_PACKAGE = "_runtime"
# Registry members a tool's attribute must not hide.
_REGISTRY_MEMBERS = frozenset({"entry", "unbound", "require_bound", "add", "remove", "dispatch", "adispatch"})
RUNTIME_EXPORTS = ("ToolSpec", "ToolgenValidationError", "ValidationProblem")
# Canonical object models that get a validate_<name>() of their own.
VALIDATED_MODELS = ("ToolCall", "Usage", "ToolDefinition", "Messages")


@dataclass(frozen=True)
class Validator:
    function: str
    model: str
    result: str
    unwrap: str
    article: str
    # What `check` validates against: the model class, or the module's adapter of a union (a type alias).
    target: str


def pyrepr(value: Any) -> str:
    """A Python literal for JSON data: repr() escapes every quote, backslash and newline."""
    if isinstance(value, float) and value != value:  # NaN has no literal
        return 'float("nan")'
    return repr(value)


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - output is Python, and every schema value passes through pyrepr
    )
    environment.filters["pyrepr"] = pyrepr
    environment.filters["thaw"] = thaw
    return environment


def _validators(project: Project) -> list[Validator]:
    result = []
    # Only the canonical unions get a validator: a user's union could take a fixed name like ToolResult.
    for union in (u for u in project.unions if u.name in project.canonical_models):
        members = " | ".join(union.members)
        function = f"validate_{snake(union.name)}"
        result.append(Validator(function, union.name, members, "value", "a", _adapter(union.name)))
    for name in VALIDATED_MODELS:
        if name == "Messages":
            message_union = next((u for u in project.unions if u.name == "Message"), None)
            item = " | ".join(message_union.members) if message_union else "Message"
            result.append(Validator("validate_messages", name, f"list[{item}]", "value.root", "a list of", name))
        else:
            result.append(Validator(f"validate_{snake(name)}", name, name, "value", "a", name))
    return sorted(result, key=lambda v: v.function)


def _adapter(union: str) -> str:
    return f"_{snake(union).upper()}"


def render_package(project: Project, header: str) -> dict[str, str]:
    environment = _environment()
    validators = _validators(project)
    tool_models = sorted(
        {t.args_model for t in project.tools} | {t.result_model for t in project.tools if t.result_model}
    )
    validator_models = sorted({v.model for v in validators} | {m for u in project.unions for m in u.members})
    validator_names = sorted([v.function for v in validators] + ["validate_tool_arguments", "validate_tool_result"])
    public_models = sorted(set(project.canonical_models) | set(tool_models))
    attributes = NameRegistry(_REGISTRY_MEMBERS)
    entries = [(tool, attributes.claim(snake(tool.name, fallback="tool"))) for tool in project.tools]
    common = {"header": header, "package": project.package}
    files = {
        "tools.py": environment.get_template("tools.py.jinja").render(
            **common, tools=project.tools, model_imports=tool_models, entries=entries
        ),
        "validators.py": environment.get_template("validators.py.jinja").render(
            **common,
            validators=validators,
            model_imports=validator_models,
            exports=validator_names,
            adapters=[(v.target, v.model) for v in validators if v.target != v.model],
        ),
        "__init__.py": environment.get_template("__init__.py.jinja").render(
            **common,
            model_imports=public_models,
            validator_imports=validator_names,
            exports=sorted(
                [
                    *public_models,
                    *validator_names,
                    *RUNTIME_EXPORTS,
                    "TOOLS",
                    "ToolContext",
                    "ToolOutcome",
                    "Tools",
                    "export_definitions",
                    "tool_definitions",
                ]
            ),
        ),
        "adapters.py": environment.get_template("adapters.py.jinja").render(**common),
        "agent.py": environment.get_template("agent.py.jinja").render(**common),
        "__main__.py": environment.get_template("__main__.py.jinja").render(**common),
        "py.typed": "",
    }
    files.update(runtime_files())
    return files


def runtime_files() -> dict[str, str]:
    """toolgen's runtime, byte for byte, as `_runtime/...` of the package: its own header and formatting."""
    return {
        f"{RUNTIME_PACKAGE}/{path.relative_to(RUNTIME_DIR).as_posix()}": path.read_text(encoding="utf-8")
        for path in sorted(RUNTIME_DIR.rglob("*.py"))
        if "__pycache__" not in path.parts
    }
