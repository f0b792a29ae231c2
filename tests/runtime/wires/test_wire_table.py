"""The table of wires: every row complete, one vocabulary everywhere, and packages that carry only the wires asked for."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import REPO_ROOT, Project

from toolgen.codegen.targets.package import RUNTIME_DIR
from toolgen.policy.lint import PROVIDERS
from toolgen.runtime import MCP, NAMES, ROWS, WIRES, Wire, canonical_name, export_tools, target_names
from toolgen.runtime.streams.state import WireState
from toolgen.runtime.wires.export import BUILDERS

CONVERSIONS = ("decode_request", "encode_request", "decode_response", "encode_response", "encode_error")


def _resolve(where: str, package: str) -> Callable[..., object]:
    module, name = where.split(":")
    found = getattr(importlib.import_module(f"toolgen.runtime.{package}.{module}"), name)
    assert callable(found), where
    return found  # type: ignore[no-any-return]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_every_row_is_complete(row: Wire) -> None:
    assert re.fullmatch(r"[a-z][a-z0-9-]*", row.name) and row.title
    codec = importlib.import_module(f"toolgen.runtime.wires.{row.codec}")
    for name in CONVERSIONS:
        assert callable(getattr(codec, name, None)), f"{row.name}: wires/{row.codec}.py has no {name}"
    if row.stream is not None:
        state = _resolve(row.stream, "wires")
        assert inspect.isclass(state) and issubclass(state, WireState), row.stream
    assert row.export in BUILDERS, f"{row.name}: export {row.export!r} is none of {BUILDERS}"
    re.compile(row.lint.name_pattern)
    assert row.lint.name_wanted
    for kind in ("request", "response", "error"):
        sniff = getattr(row.detection, kind)
        if sniff is not None:
            _resolve(sniff.where, "wires")
            assert sniff.rank > 0
    if row.detection.chunk is not None:
        _resolve(row.detection.chunk.where, "wires")
    if row.route is not None:
        assert row.route.base_url.startswith(("https://", "http://localhost")) and row.route.path.startswith("/")
        assert row.route.auth == "bearer" or row.route.auth.islower()
        assert row.key_variable, f"{row.name}: a wire with a route names its API key variable"


def test_names_aliases_and_ranks_never_collide() -> None:
    names = [row.name for row in ROWS]
    aliases = [alias for row in ROWS for alias in row.aliases]
    assert len(set(names)) == len(names) and len(set(aliases)) == len(aliases)
    assert not set(names) & set(aliases) and MCP not in {*names, *aliases}
    assert tuple(sorted(names)) == WIRES and set(NAMES) == {*names, *aliases}
    for kind in ("request", "response", "error", "chunk"):
        ranks = [s.rank for row in ROWS if (s := getattr(row.detection, kind)) is not None]
        assert len(set(ranks)) == len(ranks), f"two {kind} predicates share a rank: detection would depend on order"


def test_one_vocabulary_for_lint_export_and_the_old_spellings() -> None:
    assert PROVIDERS == target_names() == tuple(sorted((*WIRES, MCP)))
    for old, new in (("openai", "openai-chat"), ("bedrock", "bedrock-converse"), ("responses", "openai-responses")):
        assert canonical_name(old) == new
        tool = {"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}}
        assert export_tools([tool], old) == export_tools([tool], new)
    with pytest.raises(ValueError, match="unknown wire 'vertex'; one of anthropic"):
        canonical_name("vertex")


def test_the_command_lines_offer_every_name_of_the_table(make_project: Callable[..., Project]) -> None:
    project = make_project()
    help_text = project.cli("decode", "--help").stdout
    for name in ("openai-chat", "bedrock-converse", "openai", "bedrock"):
        assert name in help_text


def test_detection_tries_only_what_ranks_above_and_never_raises_on_odd_bodies() -> None:
    from toolgen.runtime import detect

    for body in ([], [1], {}, {"messages": "x"}, {"choices": 5}, {"error": None}, [{"error": 1}]):
        try:
            detect(body)
        except ValueError as error:
            assert str(error).startswith("/: expected")


def _lines(package_dir: Path) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in package_dir.rglob("*.py"))


WEATHER = """\
name: get_current_weather
description: The current weather in a city.
inputSchema:
  type: object
  properties:
    location: {type: string}
  required: [location]
"""


def test_a_package_carries_only_the_wires_it_asks_for(make_project: Callable[..., Project], mypy_cache: str) -> None:
    everything = make_project()
    everything.write("schemas/tools/weather.yaml", WEATHER)
    chat_only = make_project()
    chat_only.write("schemas/tools/weather.yaml", WEATHER)
    (chat_only.root / "toolgen.yaml").write_text(
        (chat_only.root / "toolgen.yaml").read_text() + "wires: [openai]\n", encoding="utf-8"
    )
    for project in (everything, chat_only):
        built = project.cli("build")
        assert built.returncode == 0, built.stderr
    runtime = chat_only.package_dir / "_runtime"
    assert sorted(p.name for p in (runtime / "wires").glob("*.py") if p.name != "__init__.py") == [
        "call_ids.py",
        "canonical.py",
        "codecs.py",
        "detection.py",
        "export.py",
        "export_notes.py",
        "export_root.py",
        "helpers.py",
        "key_order.py",
        "losses.py",
        "media.py",
        "pairing.py",
        "placement.py",
        "response_losses.py",
        "settings.py",
        "settings_table.py",
        "settings_types.py",
        "structured.py",
        "table.py",
    ]
    # Its wire's sub-package whole; of the others only their detection, which names a body it cannot decode.
    others = sorted({row.package for row in ROWS} - {"openai_chat"})
    assert sorted(p.relative_to(runtime / "wires").as_posix() for p in (runtime / "wires").glob("*/*.py")) == sorted(
        [
            *(f"openai_chat/{name}.py" for name in ("__init__", "codec", "detect", "dialects", "messages", "parts")),
            *(
                f"openai_chat/{name}.py"
                for name in ("plain", "stream", "stream_body", "stream_choice", "stream_shapes")
            ),
            *(f"{package}/{name}.py" for package in others for name in ("__init__", "detect")),
        ]
    )
    assert not (runtime / "demo").exists() and not (everything.package_dir / "_runtime" / "demo").exists()
    assert (runtime / "wires" / "openai_chat" / "stream.py").is_file()
    assert not (runtime / "wires" / "gemini" / "stream.py").exists()
    # The wire-specific layers shrink to under half (measured: 45%); the loop, clients, serving and
    # validation above them are shared by every wire, so they are not counted.
    wire_layers = [Path("_runtime", "wires"), Path("_runtime", "streams")]
    carried = sum(_lines(chat_only.package_dir / layer) for layer in wire_layers)
    assert carried < 0.55 * sum(_lines(everything.package_dir / layer) for layer in wire_layers)
    # What it carries works, what it does not is refused with what to do.
    probe = (
        "import json, sdk.adapters as a\n"
        "body = {'choices': [{'message': {'role': 'assistant', 'content': 'hi'}, 'finish_reason': 'stop'}]}\n"
        "print(a.WIRES, a.parse_response(body).message.content)\n"
        "try:\n"
        "    a.decode({'contents': []}, 'gemini', 'request')\n"
        "except ValueError as error:\n"
        "    print(error)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=chat_only.root / "generated", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "('openai-chat',) hi",
        "this package does not carry the gemini wire; add it to `wires:` in toolgen.yaml and run `toolgen build`",
    ]
    # What it leaves out leaves no dangling import for type checkers either.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", os.devnull, "--cache-dir", mypy_cache]
        + ["-p", "sdk"],
        cwd=chat_only.root / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    offline = subprocess.run(
        [sys.executable, "-m", "sdk", "What's the weather in Paris?"],
        cwd=chat_only.root / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    # No demo: the prompt-following scripted model calls the tool, which has no handler bound.
    assert "get_current_weather" in offline.stdout + offline.stderr, offline.stderr


def test_an_unknown_wire_in_the_config_is_refused_at_its_place(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/tools/weather.yaml", WEATHER)
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "wires:\n  - anthropic\n  - vertex\n", encoding="utf-8"
    )
    built = project.cli("build")
    assert built.returncode == 3
    assert "toolgen.yaml:9:5: error config-wire unknown wire 'vertex'; one of anthropic" in built.stdout
    assert not (project.root / "generated").exists()


def test_the_runtime_copy_is_the_source_byte_for_byte() -> None:
    committed = REPO_ROOT / "generated" / "toolgen_sdk" / "_runtime"
    for path in sorted(committed.rglob("*.py")):
        source = RUNTIME_DIR / path.relative_to(committed)
        assert path.read_bytes() == source.read_bytes(), f"{path.relative_to(committed)} differs from toolgen's runtime"
    header = "# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/"
    for path in sorted(RUNTIME_DIR.rglob("*.py")):
        assert path.read_text(encoding="utf-8").startswith(header), path
