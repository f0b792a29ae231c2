# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The model endpoint options `python -m <package>` and its `serve` share, the client they make, and the run
settings (`--setting KEY=VALUE`) they send."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

from ..clients.base import ModelClient
from ..clients.http import HTTPModel
from ..wires.codecs import carried_wires
from ..wires.table import wire


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """--base-url, --model, --wire (the wires this package carries that have an HTTP route) and --api-key-env."""
    parser.add_argument(
        "--base-url",
        help="the endpoint (the official SDK's base URL, e.g. http://localhost:8000/v1)",
    )
    parser.add_argument("--model", help="the model name, required with --base-url")
    spoken = [row.name for row in carried_wires() if row.route is not None]
    parser.add_argument(
        "--wire",
        default="openai-chat" if "openai-chat" in spoken else next(iter(spoken), None),
        choices=spoken,
        help="the endpoint's API format",
    )
    parser.add_argument(
        "--api-key-env",
        help="environment variable holding the API key (default by wire)",
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a generation setting for every request, VALUE as JSON or else as text "
        "(reasoning_effort=high, max_tokens=512, or the wire's own, frequency_penalty=0.5); "
        "repeat for more. One the wire cannot carry stops the run before any request",
    )
    parser.add_argument(
        "--on-unsupported",
        choices=("error", "note"),
        default="error",
        help="a setting the wire cannot carry: stop (error, the default) or leave it out "
        "with a note event (note)",
    )


def run_settings(
    options: argparse.Namespace, parser: argparse.ArgumentParser
) -> dict[str, Any]:
    """The --setting options as a settings mapping; a usage error for one without `=`."""
    settings: dict[str, Any] = {}
    for item in options.setting:
        key, equals, text = item.partition("=")
        if not equals or not key:
            parser.error(f"--setting takes KEY=VALUE, not {item!r}")
        try:
            settings[key] = json.loads(text)
        except ValueError:
            settings[key] = text
    return settings


def endpoint_model(
    options: argparse.Namespace,
    parser: argparse.ArgumentParser,
    offline: Callable[[], ModelClient],
    *,
    record: str | None = None,
) -> ModelClient:
    """The HTTP client the options name, or `offline()` without --base-url; a usage error without --model."""
    if not options.base_url:
        return offline()
    if not options.model:
        parser.error("--model is required with --base-url")
    variable = options.api_key_env or wire(options.wire).key_variable or ""
    return HTTPModel(
        options.base_url,
        options.model,
        wire=options.wire,
        api_key=os.environ.get(variable) or None,
        record=record,
    )
