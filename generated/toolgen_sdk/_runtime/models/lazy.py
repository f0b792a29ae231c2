# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Names a module serves from other modules, each imported on first use: a package of many tools imports fast."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pydantic


@dataclass(frozen=True)
class DeferredModels:
    """Where a tool's argument and result models are defined, imported when the tool first needs them.

    Names, not classes, so a tool's spec exists (and pickles) before its module is imported.
    """

    module: str
    args: str
    result: str | None = None

    def load(self) -> tuple[type[pydantic.BaseModel], type[pydantic.BaseModel] | None]:
        namespace = importlib.import_module(self.module)
        args = getattr(namespace, self.args)
        result = getattr(namespace, self.result) if self.result else None
        return args, result


def lazy_attributes(
    module: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `module` for the names in `homes` (name -> the module defining it).

    A name read once is kept in `module`'s namespace, so later reads are plain lookups; `__dir__` lists
    the names not imported yet too, for completion in a REPL.
    """
    namespace = sys.modules[module].__dict__
    table = MappingProxyType(dict(homes))

    def __getattr__(name: str) -> Any:
        home = table.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__
