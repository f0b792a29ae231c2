"""Package target: tools registry, validators and __init__ from templates, plus the copied runtime."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from toolgen.codegen.kept import KeptEntry, hashed
from toolgen.codegen.targets.features import not_built_in, select
from toolgen.core.names import snake, tool_attributes
from toolgen.core.resources import templates_dir
from toolgen.ir.model import REGISTRY_MEMBERS, Project, thaw
from toolgen.project.feature_names import COMMAND_LINE, FEATURES
from toolgen.runtime import ROWS, WIRES

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtime"
# Where the runtime goes inside a generated package; the formatter leaves it as toolgen wrote it.
RUNTIME_PACKAGE = "_runtime"
# The registry's own members, which no tool's attribute takes (ir/model.py); named here for the test that holds
# the list to the class, tests/generator/test_tooldef_truth_registry_names.py.
_REGISTRY_MEMBERS = REGISTRY_MEMBERS
# In the folder render_package is given to keep things in: the templates compiled, the runtime as carried.
_COMPILED = "templates"
_CARRIED = "runtime.json"
# The sha256 each compiled template's file starts with (_CompiledTemplates).
_CHECK_SIZE = 32
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


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates as earlier builds compiled them (compiling them was a third of a small build's templates).

    Jinja keys each file by the template's name and a hash of its text; the names here also carry the generator's
    fingerprint (toolgen's code, so the environment's options, and jinja's version), and files of any other are
    removed as a new one is written. Each file starts with a hash of the compiled code after it: jinja checks only
    the template's text, so code edited since (a changed literal still loads) would reach the package. A file that
    does not read back whole (cut short, or edited) is compiled again, and one that cannot be written only leaves
    the next build to compile it too.
    """

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.prefix = f"{fingerprint[:32]}-"
        super().__init__(str(folder), self.prefix + "%s.cache")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            with open(self._get_cache_filename(bucket), "rb") as file:
                data = file.read()
        except OSError:
            return
        body = data[_CHECK_SIZE:]
        if hashlib.sha256(body).digest() != data[:_CHECK_SIZE]:
            return
        try:
            bucket.bytecode_from_string(body)
        except Exception:  # noqa: BLE001 - whatever a file jinja cannot read raises, the template is compiled anew
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        body = bucket.bytecode_to_string()
        name = self._get_cache_filename(bucket)
        partial = f"{name}.{os.getpid()}.partial"
        with contextlib.suppress(OSError):
            os.makedirs(self.directory, exist_ok=True)
            with open(partial, "wb") as file:
                file.write(hashlib.sha256(body).digest() + body)
            os.replace(partial, name)
            for other in os.listdir(self.directory):
                if not other.startswith(self.prefix):
                    os.unlink(os.path.join(self.directory, other))
        with contextlib.suppress(OSError):
            os.unlink(partial)


def _fingerprint() -> str:
    from toolgen.project.manifest import generator_fingerprint

    return generator_fingerprint()


def _environment(compiled: Path | None = None) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - output is Python, and every schema value passes through pyrepr
        bytecode_cache=None if compiled is None else _CompiledTemplates(compiled, _fingerprint()),
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
            result.append(Validator("validate_messages", name, f"list[{item}]", "list(value.root)", "a list of", name))
        else:
            result.append(Validator(f"validate_{snake(name)}", name, name, "value", "a", name))
    return sorted(result, key=lambda v: v.function)


def _adapter(union: str) -> str:
    return f"_{snake(union).upper()}"


def render_package(
    project: Project,
    header: str,
    *,
    wires: tuple[str, ...] = WIRES,
    demo: bool = False,
    deferred: frozenset[str] = frozenset(),
    features: tuple[str, ...] = FEATURES,
    scratch: Path | None = None,
) -> dict[str, str]:
    """The package's files but the models; `deferred` names the models that `models` imports on first use, and
    `scratch` is a folder that keeps the templates compiled and the runtime as carried from one build to the next."""
    environment = _environment(None if scratch is None else scratch / _COMPILED)
    validators = _validators(project)
    tool_models = sorted(
        {t.args_model for t in project.tools} | {t.result_model for t in project.tools if t.result_model}
    )
    validator_models = sorted({v.model for v in validators} | {m for u in project.unions for m in u.members})
    validator_names = sorted([v.function for v in validators] + ["validate_tool_arguments", "validate_tool_result"])
    public_models = sorted(set(project.canonical_models) | set(tool_models))
    claimed = tool_attributes([tool.name for tool in project.tools], REGISTRY_MEMBERS)
    entries = list(zip(project.tools, claimed, strict=True))
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
            version=project.version,
            model_imports=[name for name in public_models if name not in deferred],
            deferred_models=[name for name in public_models if name in deferred],
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
        "adapters.py": environment.get_template("adapters.py.jinja").render(
            **common, wires=wires, streams="streams" in features
        ),
        "__main__.py": environment.get_template("__main__.py.jinja").render(
            **common,
            demo=demo,
            command_line=set(COMMAND_LINE) <= set(features),
            mcp="mcp" in features,
            serve="serve" in features,
            missing={
                "serve": not_built_in("serve"),
                "mcp": not_built_in("mcp"),
                "prompt": not_built_in('the agent loop\'s command line (`"prompt"`)', COMMAND_LINE),
            },
        ),
        "py.typed": "",
    }
    if "loop" in features:  # else no agent module: `from <package> import agent` fails where it is written
        files["agent.py"] = environment.get_template("agent.py.jinja").render(**common, http="http" in features)
    files.update(runtime_files(wires, demo=demo, features=features, scratch=scratch))
    return files


def runtime_files(
    wires: Iterable[str] = WIRES, *, demo: bool = True, features: Iterable[str] = FEATURES, scratch: Path | None = None
) -> dict[str, str]:
    """toolgen's runtime, byte for byte, as `_runtime/...` of the package: its own header and formatting.

    Only the carried wires' codec and stream modules (and the modules only they import) come along, the
    feature layers the project asks for (targets/features.py: the surface then lists only what is carried), and
    the demo only where the project asks for it. Reading and selecting ~200 files took most of a small build's
    templates stage: `scratch` keeps the result, by a hash of toolgen's code and the choices (kept.py)."""
    wires, features = tuple(wires), tuple(features)
    if scratch is None:
        return _runtime_files(wires, demo, features)
    named = {"maker": _fingerprint(), "wires": wires, "demo": demo, "features": features, "format": 1}
    key, entry = hashed(named), KeptEntry(scratch / _CARRIED)
    found = entry.lookup(key)
    if found is not None and len(found) == 1:
        return found[0]
    files = _runtime_files(wires, demo, features)
    entry.keep(key, [files])
    entry.save()  # what it holds depends on toolgen alone, not on whether this build commits
    return files


def _runtime_files(wires: tuple[str, ...], demo: bool, features: tuple[str, ...]) -> dict[str, str]:
    sources = {
        path.relative_to(RUNTIME_DIR).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(RUNTIME_DIR.rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    left_out = _uncarried(sources, set(wires))
    kept = {name: text for name, text in sources.items() if name not in left_out}
    selected = select(kept, features, demo=demo, imports=_relative_imports)
    return {f"{RUNTIME_PACKAGE}/{name}": text for name, text in selected.items()}


def _module_file(row_module: str) -> str:
    """A module the table of wires names (`openai_chat.codec`, `openai_chat.stream:OpenAIChatState`) as its file."""
    return f"wires/{row_module.split(':')[0].replace('.', '/')}.py"


def _uncarried(sources: Mapping[str, str], wires: set[str]) -> set[str]:
    """The wire modules of the wires not carried, and the modules that only wire modules import."""
    rows = {row.name: row for row in ROWS}
    if wires >= rows.keys():
        # Every wire module is carried, and so is whatever they import: nothing to leave out, nothing to parse.
        return set()
    modules_of = {
        name: {_module_file(row.codec)} | ({_module_file(row.stream)} if row.stream else set())
        for name, row in rows.items()
    }
    named = set().union(*modules_of.values())
    imports = {name: _relative_imports(name, text) for name, text in sources.items()}
    # Helper modules of a wire: imported, but only by wire modules (or by other such helpers).
    private: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in sources.keys() - named - private:
            importers = {other for other, found in imports.items() if name in found}
            if importers and importers <= named | private:
                private.add(name)
                changed = True
    carried = set().union(*(modules_of[w] for w in wires))
    reached = set(carried)
    frontier = list(carried)
    while frontier:
        for found in imports.get(frontier.pop(), set()):
            if found not in reached:
                reached.add(found)
                frontier.append(found)
    return (named | private) - reached


# A relative `from ... import ...` statement at the start of a line, its names in parentheses or up to the line's
# end: ruff formats the runtime so, and tests/generator/codegen/test_build_runtime_imports.py holds this to what ast finds.
_RELATIVE_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n]*))", re.MULTILINE)


def _relative_imports(name: str, source: str) -> set[str]:
    """Runtime files `name` imports with relative imports, at module or function level. Read with a pattern, not
    parsed: parsing every runtime module took most of a small build."""
    package = name.split("/")[:-1]
    found: set[str] = set()
    for match in _RELATIVE_IMPORT.finditer(source):
        dots, module, grouped, single = match.groups()
        parts = [*package[: len(package) - len(dots) + 1], *(module.split(".") if module else [])]
        found.add("/".join(parts) + ".py")
        for line in (single if grouped is None else grouped).splitlines():
            for alias in line.split("#")[0].split(","):
                if alias.strip():
                    found.add("/".join([*parts, alias.split()[0]]) + ".py")
    return found
