"""toolgen.yaml's `features:`: a package carries the runtime layers its project uses, and says so of the others."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ruff.__main__ import find_ruff_bin
from support.projects import Project

from toolgen.project.feature_names import FEATURES, NEEDS, feature_problems

WEATHER = """\
tools:
  - name: get_weather
    description: Weather for a city.
    inputSchema:
      type: object
      properties: {city: {type: string}}
      required: [city]
"""
TWO_WIRES = "wires: [openai-chat, anthropic]\n"


def _built(make_project: Callable[..., Project], extra: str, package: str = "sdk") -> Project:
    project = make_project(package)
    project.write("schemas/tools/weather.yaml", WEATHER)
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + extra, encoding="utf-8")
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    return project


ONE_WIRE_ONLY = "wires: [openai-chat]\nfeatures: []\n"


@pytest.fixture(scope="module")
def one_wire_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A package of one wire and no feature, built once for this module; tests take their own copies."""
    root = tmp_path_factory.mktemp("one_wire") / "project"
    root.mkdir()
    _built(lambda package: Project(root, package), ONE_WIRE_ONLY)
    return root


def _runtime_lines(project: Project) -> int:
    return sum(
        len(p.read_text(encoding="utf-8").splitlines()) for p in (project.package_dir / "_runtime").rglob("*.py")
    )


def _python(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=project.package_dir.parent, capture_output=True, text=True, env=env, check=False
    )


USE = """\
import json
import sdk
from sdk import adapters
message = sdk.validate_message({"role": "user", "content": "hi"})
request = {"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}], "max_tokens": 64}
print(json.dumps({"role": message.role, "converted": adapters.convert(request, "anthropic", "openai-chat")}))
"""


def test_a_validation_only_package_validates_converts_and_is_small(
    make_project: Callable[..., Project], tmp_path: Path, mypy_cache: str
) -> None:
    small = _built(make_project, TWO_WIRES + "features: []\n")
    everything = _built(make_project, TWO_WIRES)
    runtime = small.package_dir / "_runtime"
    for layer in ("loop", "clients", "serve", "mcp", "observe", "app", "demo", "streams"):
        assert not (runtime / layer).exists(), layer
    assert not (small.package_dir / "agent.py").exists()
    used = _python(small, "-c", USE)
    assert used.returncode == 0, used.stderr
    answer = json.loads(used.stdout)
    assert answer["role"] == "user" and answer["converted"]["messages"][0]["role"] == "user"
    # Names of absent layers are not on the runtime's surface, for type checkers and at run time alike.
    surface = _python(small, "-c", "import sdk._runtime as r; print('run' in r.__all__, hasattr(r, 'run'))")
    assert surface.stdout.split() == ["False", "False"], surface.stderr
    ruff = subprocess.run(
        [str(find_ruff_bin()), "check", "--isolated", "--no-cache", "--", "sdk"],
        cwd=small.package_dir.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    mypy = _python(small, "-m", "mypy", "--strict", "--config-file", os.devnull, "--cache-dir", mypy_cache, "-p", "sdk")
    assert mypy.returncode == 0 and "Success: no issues found" in mypy.stdout, mypy.stdout + mypy.stderr
    lines, all_lines = _runtime_lines(small), _runtime_lines(everything)
    print(f"validation-only _runtime/: {lines} lines; all features: {all_lines} ({lines / all_lines:.0%})")
    # Two wires: 13,480 of 36,519 lines (37%), with the streams and the loop's run settings left out (53%
    # before `streams` became a feature).
    assert lines / all_lines < 0.40


@pytest.mark.parametrize("feature", [f for f in FEATURES if f != "serve"])
def test_each_feature_on_its_own_builds_and_imports(make_project: Callable[..., Project], feature: str) -> None:
    """Each feature with only what it needs (`loop` and `http` need `streams`)."""
    chosen = sorted({feature, *NEEDS.get(feature, ())})
    project = _built(make_project, f"features: [{', '.join(chosen)}]\n")
    imported = _python(project, "-c", "import sdk, sdk._runtime as r; [getattr(r, n) for n in r.__all__]")
    assert imported.returncode == 0, imported.stderr
    assert (project.package_dir / "agent.py").exists() == (feature == "loop")
    assert (project.package_dir / "_runtime" / "streams").is_dir() == ("streams" in chosen)
    print(f"features: {chosen}: {_runtime_lines(project)} lines")


def test_what_a_feature_needs_is_listed_in_full() -> None:
    """A need's own needs are named with it: one build says everything that is missing, not one layer a time."""
    for feature, needs in NEEDS.items():
        assert feature in FEATURES and set(needs) <= set(FEATURES)
        for need in needs:
            assert set(NEEDS.get(need, ())) <= set(needs), (feature, need)
    assert feature_problems(FEATURES, demo=True) == []
    assert feature_problems([], demo=False) == []
    assert feature_problems(["streams"], demo=False) == []


def _refused(make_project: Callable[..., Project], features: str) -> str:
    project = make_project()
    project.write("schemas/tools/weather.yaml", WEATHER)
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + f"features: {features}\n", encoding="utf-8")
    built = project.cli("build")
    assert built.returncode == 3, built.stdout + built.stderr
    assert not project.package_dir.exists()
    return built.stdout + built.stderr


def test_serve_needs_the_loop_http_and_streams_and_says_which(make_project: Callable[..., Project]) -> None:
    assert "feature 'serve' needs 'http', 'loop', 'streams'" in _refused(make_project, "[serve]")


@pytest.mark.parametrize(("features", "named"), [("[loop]", "loop"), ("[http]", "http"), ("[mcp, loop]", "loop")])
def test_the_loop_and_http_without_streams_are_a_config_error_naming_it(
    make_project: Callable[..., Project], features: str, named: str
) -> None:
    """The model clients and the loop read answers as the aggregator's events: without `streams`, exit 3."""
    assert f"feature {named!r} needs 'streams': add it to features:" in _refused(make_project, features)


def test_a_misspelled_feature_is_exit_3_with_did_you_mean(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/tools/weather.yaml", WEATHER)
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "features: [loop, htpp]\n", encoding="utf-8")
    built = project.cli("build")
    assert built.returncode == 3
    assert "unknown feature 'htpp'; did you mean 'http'?" in built.stdout + built.stderr


@pytest.mark.parametrize("features", ["[]", "[loop, http, streams]"])
def test_serve_in_a_package_without_it_is_one_line_and_4(make_project: Callable[..., Project], features: str) -> None:
    project = _built(make_project, f"features: {features}\n")
    served = _python(project, "-m", "sdk", "serve")
    assert served.returncode == 4
    assert served.stderr.splitlines() == [
        "python -m sdk: serve is not built into this package: add serve to features: in toolgen.yaml and build again"
    ]
    if features == "[]":
        prompted = _python(project, "-m", "sdk", "Weather in Paris?")
        assert prompted.returncode == 4
        assert prompted.stderr.splitlines() == [
            'python -m sdk: the agent loop\'s command line (`"prompt"`) is not built into this package: add http, '
            "loop and streams to features: in toolgen.yaml and build again"
        ]


ONE_WIRE = """\
import json
import sdk
from sdk import _runtime, adapters
messages = [{"role": "user", "content": "Weather in Paris?"}]
request = adapters.encode_request(messages, "openai-chat", model="m", max_tokens=64)
asked = adapters.parse_request(request, "openai-chat")
call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
answer = {"role": "assistant", "content": None, "tool_calls": [call]}
body = {"id": "r", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": answer, "finish_reason": "tool_calls"}]}
decoded = adapters.decode(body, "openai-chat", "response")
again = adapters.decode(_runtime.encode_response(decoded, "openai-chat"), "openai-chat", "response")
assert again.message == decoded.message and again.finish == decoded.finish, (again, decoded)
parsed = adapters.parse_response(body, "openai-chat")
function = parsed.message.tool_calls[0].function
arguments = sdk.validate_tool_arguments(function.name, json.loads(function.arguments))
stream_names = ("stream_events", "aggregate", "astream_events", "Aggregator", "Event", "TextDelta", "detect_wire")
print(json.dumps({
    "asked": asked[0].content,
    "model": request["model"],
    "call": function.name,
    "city": arguments.city,
    "finish": parsed.finish.reason if parsed.finish else None,
    "adapters": [n for n in stream_names if hasattr(adapters, n) or n in adapters.__all__],
    "runtime": [n for n in stream_names if hasattr(_runtime, n) or n in _runtime.__all__],
}))
"""


def test_without_streams_a_one_wire_package_encodes_and_decodes_and_offers_no_stream_names(
    one_wire_built: Path, tmp_path: Path
) -> None:
    project = Project.copy_of(one_wire_built, tmp_path / "one_wire")
    runtime = project.package_dir / "_runtime"
    assert not (runtime / "streams").exists()
    assert (runtime / "wires" / "openai_chat" / "codec.py").exists()
    used = _python(project, "-c", ONE_WIRE)
    assert used.returncode == 0, used.stderr
    assert json.loads(used.stdout) == {
        "asked": "Weather in Paris?",
        "model": "m",
        "call": "get_weather",
        "city": "Paris",
        "finish": "tool_calls",
        "adapters": [],
        "runtime": [],
    }
    # Absent, not stubbed: a type checker reading adapters.py finds no stream function to call.
    tree = ast.parse((project.package_dir / "adapters.py").read_text(encoding="utf-8"))
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported.isdisjoint({"stream_events", "aggregate", "Aggregator", "Event", "MessageEnd"}), imported


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _recorded_stream(arguments: str) -> str:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    chunks = [_chunk({"role": "assistant", "tool_calls": [call]}), _chunk({}, "tool_calls")]
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def test_toolgen_validate_reads_recorded_streams_for_a_package_without_streams(
    make_project: Callable[..., Project], one_wire_built: Path, tmp_path: Path
) -> None:
    """toolgen reads a recorded stream with its own runtime and checks the message with the package's models: a
    package built without `streams` gets the same findings and exit codes as one with every feature."""
    outcomes = []
    without_streams = Project.copy_of(one_wire_built, tmp_path / "one_wire")
    for project in (without_streams, _built(make_project, "wires: [openai-chat]\n")):
        project.write("good.sse", _recorded_stream('{"city": "Paris"}'))
        project.write("bad.sse", _recorded_stream('{"town": "Paris"}'))
        good = project.cli("validate", "--as", "openai-chat.response", "good.sse")
        bad = project.cli("validate", "--as", "openai-chat.response", "bad.sse")
        assert "Traceback" not in good.stderr + bad.stderr
        outcomes.append((good.returncode, good.stdout, bad.returncode, bad.stdout))
    without, everything = outcomes
    assert without == everything
    assert without[0] == 0 and without[2] == 1
    assert "bad.sse:1:" in without[3] and "city" in without[3]
