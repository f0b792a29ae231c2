"""What each command imports: only what it needs, so that it starts about as fast as `import pydantic`.

Each command runs in a fresh interpreter under `-X importtime`, which lists every module imported. The
renderer (jinja2, datamodel-code-generator, ruff) loads only for `build` and a `check` that renders; jsonschema
only where schemas are checked (lint, export) or a record needs it. Times are in benchmarks/bench_startup.py;
no test here times anything.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.projects import REPO_ROOT, Project

RENDERER = frozenset(
    {"jinja2", "datamodel_code_generator", "ruff", "toolgen.codegen.render", "toolgen.codegen.targets"}
)
FRONT_END = frozenset({"jsonschema", "toolgen.ir.lower", "toolgen.source.meta"})
# What `check` and `build` need to compare and write: the verbs that only read a project do without it.
CHECKING = frozenset(
    {"toolgen.output.drift", "toolgen.output.instant_check", "toolgen.output.write", "difflib", "subprocess"}
)
# The stages `toolgen --help` loads none of: the command line imports toolgen.api, which imports them in each verb.
PIPELINE = frozenset(
    {"toolgen.source", "toolgen.project", "toolgen.ir", "toolgen.codegen", "toolgen.output", "toolgen.policy"}
    | {"toolgen.payloads", "toolgen.importing"}
)
# The meta-schema checks (and the registry of published meta-schemas): a project the manifest records as
# built, unchanged since, needs neither.
META_SCHEMAS = frozenset({"jsonschema", "referencing", "jsonschema_specifications", "toolgen.source.meta"})
DECODE_BODY = (
    REPO_ROOT / "tests" / "fixtures" / "payloads" / "openai-chat" / "request" / "multimodal-developer-refusal.json"
)
PATTERN = ("matcher", "backtrack", "regex_tree", "patterns", "ecma_regex")
MESSAGE = '{"role": "user", "content": "What is the weather in Paris?"}\n'


def _imported(root: Path, *args: str) -> set[str]:
    """The modules `toolgen ARGS` imports in `root`, and each package on the way to one (`a` for `a.b.c`)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolgen", *args],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # -X importtime writes one line per module: "import time: self | cumulative | <indent>name"
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.count("|") == 2}
    assert "toolgen.cli.main" in names, done.stderr[-2000:]
    return {".".join(name.split(".")[:depth]) for name in names for depth in range(1, name.count(".") + 2)}


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("records") / "message.json"
    path.write_text(MESSAGE, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("args", "not_loaded"),
    [
        pytest.param(("--help",), RENDERER | FRONT_END | PIPELINE | {"yaml", "pydantic"}, id="help"),
        pytest.param(("decode", str(DECODE_BODY)), RENDERER | FRONT_END | {"yaml"}, id="decode"),
        pytest.param(("lint",), RENDERER | CHECKING | META_SCHEMAS | {"pydantic_core"}, id="lint"),
        pytest.param(
            ("export", "--format", "openai"), RENDERER | CHECKING | META_SCHEMAS | {"pydantic_core"}, id="export"
        ),
        pytest.param(("check",), RENDERER | FRONT_END, id="check-up-to-date"),
    ],
)
def test_a_command_imports_only_what_it_needs(
    built_root: Path, args: tuple[str, ...], not_loaded: frozenset[str]
) -> None:
    loaded = sorted(_imported(built_root, *args) & not_loaded)
    assert loaded == [], f"`toolgen {' '.join(args)}` imported {loaded}: import them inside the code that needs them"


PATTERNED = """\
name: find_order
description: Find an order.
inputSchema:
  type: object
  properties:
    order_id: {type: string, pattern: "^[A-Z0-9-]{6,32}$"}
    code: {type: string, pattern: "^(?=[A-Z])[A-Z0-9]+$"}
"""


def test_lint_and_export_read_patterns_without_pydantic_core(project: Project) -> None:
    # Their pattern rules ask only whether a pattern can be read; Rust's regex (through pydantic-core) is for
    # matching values, which neither does here.
    project.write("schemas/order.yaml", PATTERNED)
    assert project.cli("build").returncode == 0
    for args in (("lint",), ("export", "--format", "openai")):
        assert "pydantic_core" not in _imported(project.root, *args), args


def test_validating_a_record_needs_no_renderer_and_no_json_schema(built_root: Path, record: Path) -> None:
    shutil.rmtree(built_root / ".toolgen-cache" / "validate", ignore_errors=True)
    loaded = _imported(built_root, "validate", "--as", "message", str(record))
    assert "sdk" in loaded, "the first record is checked with the project's generated package"
    assert sorted(loaded & (RENDERER | FRONT_END)) == [], "a message the models check alone needs no jsonschema"
    assert sorted(loaded & CHECKING) == [], "validating compares and writes nothing"
    # The wires' table comes with export and the adapters; a message of the canonical model needs neither.
    assert not any(name.startswith("sdk._runtime.wires") for name in loaded), sorted(loaded)
    # The pattern machinery comes with a model that has a pattern to match, or a sentence that quotes one.
    patterns = {f"{runtime}.schema.{module}" for runtime in ("sdk._runtime", "toolgen.runtime") for module in PATTERN}
    assert sorted(loaded & patterns) == [], "a valid message needs no pattern machinery"
    # Then the plain validators the first run kept: neither the package, nor pydantic's model machinery, nor YAML.
    again = _imported(built_root, "validate", "--as", "message", str(record))
    models = {"sdk", "pydantic.main", "pydantic._internal._model_construction", "yaml"}
    assert sorted(again & (models | RENDERER | FRONT_END | CHECKING)) == [], "validate_fast.py keeps them away"


def test_a_check_that_renders_loads_the_renderer(built_root: Path) -> None:
    # the other side of the tests above, so they cannot pass by misspelling what they look for
    loaded = _imported(built_root, "check", "--full")
    assert loaded >= RENDERER | FRONT_END
