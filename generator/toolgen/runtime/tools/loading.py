# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Find an application's bound tools by name, `"module:attribute"`, for the command line and servers."""

from __future__ import annotations

import importlib
from typing import TypeVar

from .registry import Registry

RegistryT = TypeVar("RegistryT", bound=Registry)


class ToolsLoadError(ValueError):
    """`load_bound_tools` could not find the tools it was pointed at; the message says what to fix."""


def load_bound_tools(spec: str, kind: type[RegistryT]) -> RegistryT:
    """The `kind` registry (the package's `Tools`) named by `spec`, `"package.module:attribute"`.

    The attribute (dots reach inside it) is a registry with its handlers bound, or a callable taking no
    arguments that returns one. The module is imported as Python finds it: `python -m <package>` puts the
    current directory first on the path.
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ToolsLoadError(
            f"--tools {spec!r} should be 'module:attribute', "
            "for example 'myapp.handlers:tools'"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise ToolsLoadError(
                f"--tools {spec!r}: no module named {module_name!r} "
                "(run from the folder that holds it, or install it)"
            ) from None
        raise ToolsLoadError(
            f"--tools {spec!r}: importing {module_name!r} failed: {error}"
        ) from None
    except Exception as error:  # noqa: BLE001 - any failure of the user's module is theirs to read
        raise ToolsLoadError(
            f"--tools {spec!r}: importing {module_name!r} raised "
            f"{type(error).__name__}: {error}"
        ) from None
    value: object = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ToolsLoadError(
                f"--tools {spec!r}: module {module_name!r} has no attribute {attribute!r}"
            )
        value = getattr(value, part)
    if not isinstance(value, Registry) and callable(value):
        try:
            value = value()
        except Exception as error:  # noqa: BLE001 - the factory is the user's code
            raise ToolsLoadError(
                f"--tools {spec!r}: calling {attribute}() raised "
                f"{type(error).__name__}: {error}"
            ) from None
    if not isinstance(value, kind):
        raise ToolsLoadError(
            f"--tools {spec!r}: {attribute} is {type(value).__name__}, not this "
            f"package's {kind.__name__} (or a function returning one)"
        )
    return value
