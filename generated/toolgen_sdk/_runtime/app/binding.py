# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The registry the package's command line serves or runs: the user's bound tools, or the package's own."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from ..tools.loading import load_bound_tools
from ..tools.registry import Registry


def bind_demo(registry: Registry, workspace: str | None, scratch: Path) -> None:
    """The demo handlers, in a package built with `demo: true`; other packages bind their own."""
    home = __name__.rsplit(".", 2)[0] + ".demo"
    try:
        # By name: packages built without the demo do not have the module, for type checkers either.
        handlers = importlib.import_module(".handlers", home)
    except ModuleNotFoundError as error:
        if error.name != home:
            raise
        return
    chosen = Path(workspace) if workspace else handlers.sample_workspace(scratch)
    handlers.bind_demo_handlers(registry, chosen)


def chosen_registry(
    spec: str | None, make_registry: Callable[[], Registry]
) -> Registry:
    """The user's bound tools named by `spec` (`--tools`), else a fresh registry of the package's tools.

    Raises ToolsLoadError when `spec` does not lead to the package's Tools."""
    if not spec:
        return make_registry()
    kind = make_registry if isinstance(make_registry, type) else Registry
    return load_bound_tools(spec, kind)
