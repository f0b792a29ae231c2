# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The optional packages behind each extra, and the ImportError that names the extra when one of them is missing.

The runtime imports an extra's packages only where they are used; when one cannot be imported, the error says
which extra brings it and how to install it, in one line. A missing package counts as the extra's when its
top-level module is the extra's own or one of its dependencies' (`import mcp` fails on a missing `anyio`).
"""

from __future__ import annotations

import importlib
from types import MappingProxyType, ModuleType

# DBOS and what it imports at start: the `durable` extra, and the most of `serve`.
_DURABLE = (
    "dbos",
    "sqlalchemy",
    "psycopg",
    "psycopg_binary",
    "greenlet",
    "croniter",
    "dateutil",
    "yaml",
    "click",
)
# What each extra installs, by top-level module: its own packages first, then what they import at start.
PROVIDES = MappingProxyType(
    {
        "http": (
            "httpx",
            "httpcore",
            "h11",
            "h2",
            "anyio",
            "sniffio",
            "certifi",
            "idna",
        ),
        "bedrock": ("botocore", "jmespath", "dateutil", "urllib3"),
        "vertex": (
            "google",
            "requests",
            "cachetools",
            "pyasn1",
            "pyasn1_modules",
            "rsa",
            "urllib3",
            "charset_normalizer",
            "certifi",
            "idna",
        ),
        "durable": _DURABLE,
        "serve": (
            *_DURABLE,
            "starlette",
            "uvicorn",
            "anyio",
            "h11",
            "sniffio",
            "httpx",
            "httpcore",
        ),
        "otel": ("opentelemetry",),
        "mcp": (
            "mcp",
            "mcp_types",
            "anyio",
            "sniffio",
            "httpx",
            "httpx2",
            "httpx_sse",
            "httpcore",
            "h11",
            "jsonschema",
            "jwt",
            "multipart",
            "python_multipart",
            "pydantic_settings",
            "sse_starlette",
            "starlette",
            "uvicorn",
            "typing_inspection",
            "opentelemetry",
        ),
    }
)
# The same packages named for pip, for those who install them without the extra.
REQUIREMENTS = MappingProxyType(
    {
        "http": "httpx",
        "bedrock": "botocore",
        "vertex": "'google-auth[requests]'",
        "durable": "dbos",
        "serve": "dbos starlette uvicorn",
        "otel": "opentelemetry-api",
        "mcp": "'mcp>=2.3,<3'",
    }
)
# The package this runtime is part of: toolgen itself, or the generated package it was copied into.
_PACKAGE = __name__.split(".")[0]


class MissingExtra(ImportError):
    """An optional package is not installed; the message names the extra that brings it and how to install it."""

    def __init__(self, message: str, *, extra: str, missing: str) -> None:
        super().__init__(message, name=missing)
        self.extra = extra
        self.missing = missing


def _distribution(extra: str) -> str:
    """The distribution whose extra to install: the generated package's own when it is installed and declares
    the extra (`package_layout: installable`), else toolgen's."""
    if _PACKAGE == "toolgen":
        return "toolgen"
    # Imported here: only an error message needs it.
    import importlib.metadata

    name = _PACKAGE.replace("_", "-")
    try:
        declared = importlib.metadata.metadata(name).get_all("Provides-Extra") or []
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return "toolgen"
    return name if extra in declared else "toolgen"


def missing_extra(error: ImportError, extra: str, needs: str) -> MissingExtra | None:
    """The error naming `extra` when `error` is one of its packages missing; None when it is another module (a
    bug to show as it is). `needs` says what wanted it: "HTTPModel", "the HTTP service"."""
    name = error.name
    top = (name or "").split(".")[0]
    if name is not None and top not in PROVIDES[extra]:
        return None
    # An ImportError without a module name (raised by hand, or a broken install) is taken as the extra's.
    missing = top or PROVIDES[extra][0]
    why = f"{top} is not installed" if top else " ".join(str(error).split())
    distribution = _distribution(extra)
    return MissingExtra(
        f"{needs} needs the `{extra}` extra ({why}): "
        f"pip install '{distribution}[{extra}]' (or: pip install {REQUIREMENTS[extra]})",
        extra=extra,
        missing=missing,
    )


def optional_module(name: str, extra: str, needs: str) -> ModuleType:
    """`import name`, or MissingExtra naming `extra` when it (or what it imports) is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        named = missing_extra(error, extra, needs)
        if named is None:
            raise
        raise named from error
