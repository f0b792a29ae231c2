"""toolgen.yaml's `features:`: which runtime layers above validation and conversion a package's `_runtime/` carries.

Every package carries the models, the tool registry, the schema helpers and its wires' codecs. A feature adds a
layer and whatever only it imports: `streams` (the streaming aggregator: framing, the events, and its wires'
stream states, `wires/<wire>/stream*.py`), `loop` (the agent loop, its OpenTelemetry tracing, a no-op without it,
and the scripted models), `http` (the HTTP model clients), `serve` (the durable HTTP service, which runs the loop
and calls models over HTTP), `mcp` (serving and using tools over MCP). `loop` and `http` read models' answers as
stream events, so they need `streams` (feature_names.NEEDS); `python -m <package> "prompt"` needs `loop`, `http`
and `streams`, and so does `demo: true`. A package without a feature leaves the modules out, drops their names
from `_runtime`'s surface and from adapters.py (so type checkers see only what is there), and its command line
says in one line that the feature is not built in, exit 4.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase

from toolgen.project.feature_names import COMMAND_LINE

# A wire's stream state and its helpers, beside its codec but part of the streams layer (runtime/__init__.py).
_WIRE_STREAMS = "wires/*/stream*.py"
# The runtime modules a feature brings (folders end with /, patterns hold *); the modules they import come with them.
_ROOTS: Mapping[str, tuple[str, ...]] = {
    "loop": ("loop/", "observe/", "clients/__init__.py", "clients/base.py", "clients/scripted.py"),
    "http": ("clients/",),
    "serve": ("serve/", "app/__init__.py", "app/serving.py", "app/server_limits.py"),
    "mcp": ("mcp/", "app/__init__.py", "app/binding.py", "app/serve_mcp.py"),
    "streams": ("streams/", _WIRE_STREAMS),
}
_COMMAND_LINE_ROOTS = ("app/__init__.py", "app/main.py")
_DEMO_ROOTS = ("demo/",)
# Layers only features bring: a module here that no chosen feature reaches is left out.
_FEATURE_LAYERS = (
    "app/",
    "clients/",
    "demo/",
    "loop/",
    "mcp/",
    "observe/",
    "serve/",
    "streams/",
    _WIRE_STREAMS,
    # Single modules only features import: run settings (the loop's) and tool loading (the command line's,
    # serve's and MCP's).
    "wires/settings",
    "tools/loading.py",
)
# The two files naming every public name's module: a package without some modules gets them filtered.
SURFACE_FILES = ("__init__.py", "surface.py")
# The command line imports these on `serve` and `mcp`: a package without the feature gets a module that says so.
_STUBBED = {"app/serving.py": ("serve", "serve_main"), "app/serve_mcp.py": ("mcp", "mcp_main")}
_STUB = '''\
# toolgen runtime: written by toolgen for a package whose toolgen.yaml features leave `{feature}` out.
"""`python -m <package> {feature}`: not built into this package; one line saying so, and 4."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ..tools.registry import Registry


def {function}(
    argv: Sequence[str], make_registry: Callable[[], Registry], *, prog: str
) -> int:
    """Say that `{feature}` is not built in (toolgen.yaml `features:` leaves it out), and 4."""
    sys.stderr.write(f"{{prog}}: {message}\\n")
    return 4
'''


def not_built_in(what: str, needs: Iterable[str] = ()) -> str:
    """The one line a package's command line prints for `what`, which its build left out (needing `needs`)."""
    names = list(needs) or [what]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{what} is not built into this package: add {listed} to features: in toolgen.yaml and build again"


def select(
    sources: Mapping[str, str],
    features: Iterable[str],
    *,
    demo: bool,
    imports: Callable[[str, str], set[str]],
) -> dict[str, str]:
    """`sources` (runtime path -> text) as the package carries them with `features`: the feature layers no chosen
    feature reaches left out, the surface filtered to what is left, the command line's `serve`/`mcp` stubbed."""
    chosen = set(features)
    roots = {root for feature in chosen for root in _ROOTS[feature]}
    command_line = set(COMMAND_LINE) <= chosen
    if command_line:
        roots.update(_COMMAND_LINE_ROOTS)
    if demo:
        roots.update(_DEMO_ROOTS)
    kept = {name for name in sources if not any(_under(name, layer, prefix=True) for layer in _FEATURE_LAYERS)}
    kept |= {name for name in sources if any(_under(name, root) for root in roots)}
    stubs = {name for name, (feature, _) in _STUBBED.items() if command_line and feature not in chosen}
    kept -= stubs
    kept = _closure(sources, kept, stubs, imports)
    if kept == sources.keys():
        return dict(sources)
    carried = kept | stubs
    selected = {name: sources[name] for name in sorted(kept) if name not in SURFACE_FILES}
    selected.update({name: _stub(name) for name in stubs})
    for name in SURFACE_FILES:
        selected[name] = filter_surface(sources[name], carried)
    return dict(sorted(selected.items()))


def _under(name: str, root: str, *, prefix: bool = False) -> bool:
    """Whether the runtime file `name` is `root`: that file, a file in that folder (ending with /), one the pattern
    (holding *) matches, or with `prefix` any file whose path starts so."""
    if "*" in root:
        return fnmatchcase(name, root)
    return name == root or ((prefix or root.endswith("/")) and name.startswith(root))


def _closure(
    sources: Mapping[str, str], kept: set[str], stubs: set[str], imports: Callable[[str, str], set[str]]
) -> set[str]:
    """`kept` and every runtime module it imports (at module or function level), but the stubbed ones."""
    reached = set(kept)
    frontier = [name for name in kept if name not in SURFACE_FILES]
    while frontier:
        name = frontier.pop()
        for found in imports(name, sources[name]):
            if found in sources and found not in reached and found not in stubs:
                reached.add(found)
                frontier.append(found)
    return reached


def _stub(name: str) -> str:
    feature, function = _STUBBED[name]
    return _STUB.format(feature=feature, function=function, message=not_built_in(feature))


def filter_surface(source: str, carried: set[str]) -> str:
    """`__init__.py` or `surface.py` without the names whose module the package does not carry: their
    TYPE_CHECKING imports and their modules' entries in surface.py's table, each removed line by line (every one
    sits on lines of its own, as ruff formats them); `__all__` and the names' homes are derived from the table."""
    drop: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module != "surface":
            if _module_path(f".{node.module}") not in carried:
                drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith(".")):
                    continue
                if _module_path(key.value) not in carried:
                    drop.update(range(key.lineno, (value.end_lineno or value.lineno) + 1))
    lines = source.splitlines(keepends=True)
    return "".join(line for number, line in enumerate(lines, 1) if number not in drop)


def _module_path(home: str) -> str:
    """`.app.main` (a module of surface.py's table, relative to the runtime) as the runtime file `app/main.py`."""
    return home.lstrip(".").replace(".", "/") + ".py"
