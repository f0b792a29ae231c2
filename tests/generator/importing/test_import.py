"""`toolgen import`: export -> import -> build gives back the same TOOLS, for every format, as far as it carries them."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import REPO_ROOT, Project, run_sdk

GENERATED = REPO_ROOT / "generated"
DEADLINE = 120
FIELDS = (
    "title",
    "description",
    "input_schema",
    "output_schema",
    "meta",
    "annotations",
    "return_direct",
    "requires_approval",
    "timeout",
    "strict",
)
# What a tool loses in each format (README, "MCP both ways"); everything else must come back as it was.
NOT_CARRIED = {
    "mcp": set(),
    "openai": {"title", "output_schema", "meta", "annotations", "return_direct", "requires_approval", "timeout"},
    "anthropic": {
        "title",
        "output_schema",
        "meta",
        "annotations",
        "return_direct",
        "requires_approval",
        "timeout",
        "strict",
    },
    "gemini": {"title", "meta", "annotations", "return_direct", "requires_approval", "timeout", "strict"},
    "bedrock": {
        "title",
        "output_schema",
        "meta",
        "annotations",
        "return_direct",
        "requires_approval",
        "timeout",
        "strict",
    },
}
# What the unset fields read as in a built ToolSpec.
UNSET = {"title": None, "output_schema": None, "meta": {}, "annotations": {}, "return_direct": False}
UNSET |= {"requires_approval": False, "timeout": None, "strict": None}

TOOLS_OF = """
import json, sys, importlib
tools = importlib.import_module(sys.argv[1] + ".tools").TOOLS
fields = sys.argv[2].split(",")
print(json.dumps({name: {f: getattr(spec, f) for f in fields} for name, spec in tools.items()}, default=dict))
"""


def tools_of(root: Path, package: str) -> dict[str, dict[str, Any]]:
    """The FIELDS of each tool of the package built under `root`, as JSON gives them back.

    Read in this process: each test builds a package of a name of its own, which no other test imports, and it
    leaves sys.modules and sys.path as it found them."""
    generated = str(root / "generated")
    sys.path.insert(0, generated)
    importlib.invalidate_caches()
    try:
        tools = importlib.import_module(f"{package}.tools").TOOLS
        assert Path(str(sys.modules[package].__file__)).is_relative_to(root)
        found = {name: {f: getattr(spec, f) for f in FIELDS} for name, spec in tools.items()}
    finally:
        sys.path.remove(generated)
        for name in [name for name in sys.modules if name == package or name.startswith(f"{package}.")]:
            del sys.modules[name]
    read: dict[str, dict[str, Any]] = json.loads(json.dumps(found, default=dict))
    return read


@pytest.fixture(scope="module")
def original() -> dict[str, dict[str, Any]]:
    """The committed package's tools, read in a fresh interpreter: other tests import toolgen_sdk in theirs."""
    found: dict[str, dict[str, Any]] = run_sdk(REPO_ROOT, TOOLS_OF, "toolgen_sdk", ",".join(FIELDS))
    return found


def toolgen(*args: str, cwd: Path) -> Ran:
    """`toolgen ARGS` in this process (click's runner): its exit code and output, as a process would give them."""
    return toolgen_in(cwd, *args)


def expected(original: dict[str, dict[str, Any]], lost: set[str]) -> dict[str, dict[str, Any]]:
    return {name: {f: (UNSET[f] if f in lost else v) for f, v in spec.items()} for name, spec in original.items()}


@pytest.mark.parametrize("source", sorted(NOT_CARRIED))
def test_export_import_build_gives_back_the_tools(
    source: str, make_project: Any, original: dict[str, dict[str, Any]]
) -> None:
    fresh: Project = make_project(f"imported_{source}")
    exported = toolgen("export", "--format", source, "-o", str(fresh.root / "tools.json"), cwd=REPO_ROOT)
    assert exported.returncode == 0, exported.stderr
    imported = toolgen("import", "tools.json", "--from", source, cwd=fresh.root)
    assert imported.returncode == 0, imported.stderr
    shares = ["schemas/tools/shared_defs.yaml"] if source in ("gemini", "mcp") else []  # the Todo both todo tools use
    assert imported.stdout.split() == [*(f"schemas/tools/{name}.yaml" for name in original), *shares]
    built = fresh.cli("build")
    assert built.returncode == 0, built.stderr
    assert tools_of(fresh.root, f"imported_{source}") == expected(original, NOT_CARRIED[source])


def test_import_from_a_live_server_then_build(make_project: Any, original: dict[str, dict[str, Any]]) -> None:
    pytest.importorskip("mcp", reason="importing from a server needs the mcp extra")
    fresh: Project = make_project("imported_live")
    # From generated/, as a user would: the server is `python -m toolgen_sdk mcp` there.
    result = toolgen(
        "import", "-C", str(fresh.root), "mcp", "--", sys.executable, "-m", "toolgen_sdk", "mcp", cwd=GENERATED
    )
    assert result.returncode == 0, result.stderr
    assert "imported 5 tools from" in result.stderr
    assert fresh.cli("build").returncode == 0
    assert tools_of(fresh.root, "imported_live") == expected(original, NOT_CARRIED["mcp"])
    # Importing the same again changes nothing; a file edited since is kept unless --force.
    again = toolgen(
        "import", "-C", str(fresh.root), "mcp", "--", sys.executable, "-m", "toolgen_sdk", "mcp", cwd=GENERATED
    )
    assert again.returncode == 0, again.stderr
    (fresh.root / "schemas/tools/todo_read.yaml").write_text("tools: []\n", encoding="utf-8")
    kept = toolgen(
        "import", "-C", str(fresh.root), "mcp", "--", sys.executable, "-m", "toolgen_sdk", "mcp", cwd=GENERATED
    )
    assert kept.returncode == 3
    assert "todo_read.yaml:1:1: error import exists already; pass --force to replace it" in kept.stdout


@pytest.mark.parametrize(
    ("text", "source", "said"),
    [
        (
            '[{"name": "a", "inputSchema": {"type": "object"}},\n {"name": "b", "inputSchema": {"type": "string"}}]',
            "mcp",
            "tools.json:2:31: error import tools[1] ('b'): inputSchema must be an object schema",
        ),
        (
            '{"tools": [{"function": {"name": 7}}]}',
            "openai",
            "tools.json:1:34: error import a tool needs a non-empty string `name`",
        ),
        (
            '[{"name": "a", "input_schema": [1]}]',
            "anthropic",
            "tools.json:1:32: error import input_schema must be an object, not list",
        ),
        ('[{"functionDeclarations": 3}]', "gemini", "functionDeclarations must be a list"),
        ("[]", "mcp", "tools.json:1:1: error import the file lists no tools"),
        ('[{"name": "a",', "mcp", "tools.json:1:"),
        ('"tools"', "openai", "expected a list of tools, or an object with a `tools` list"),
    ],
)
def test_a_tools_list_that_cannot_be_imported_is_invalid_input(
    tmp_path: Path, text: str, source: str, said: str
) -> None:
    (tmp_path / "tools.json").write_text(text, encoding="utf-8")
    result = toolgen("import", "tools.json", "--from", source, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert said in result.stdout
    assert "nothing was written" in result.stderr
    assert not (tmp_path / "schemas").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["tools.json"], "name the file's format with --from"),
        (["mcp"], "give the server's command after `--`, or its --url"),
        (["mcp", "--url", "http://127.0.0.1:9/mcp", "--", "python"], "one of the two"),
        (["tools.json", "--from", "mcp", "--url", "http://x"], "no command and no --url with --from"),
        (["tools.json", "--from", "cohere"], "Invalid value for '--from'"),
    ],
)
def test_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    result = toolgen("import", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert said in result.stderr


def test_a_file_that_is_missing_or_a_server_that_is_not_one(tmp_path: Path) -> None:
    missing = toolgen("import", "nowhere.json", "--from", "openai", cwd=tmp_path)
    assert missing.returncode == 3 and "nowhere.json:1:1: error file-missing file not found" in missing.stdout
    pytest.importorskip("mcp", reason="importing from a server needs the mcp extra")
    not_a_server = toolgen("import", "mcp", "--timeout", "20", "--", sys.executable, "-c", "print(1)", cwd=tmp_path)
    # A server that cannot be started or reached is the environment's problem (4), as `import mcp --check` says.
    assert not_a_server.returncode == 4
    assert "toolgen: could not connect to the MCP server" in not_a_server.stderr
    unreachable = toolgen("import", "mcp", "--url", "http://127.0.0.1:9/mcp", "--timeout", "20", cwd=tmp_path)
    assert unreachable.returncode == 4
    assert "could not connect to the MCP server http://127.0.0.1:9/mcp" in unreachable.stderr


def test_odd_names_make_safe_distinct_file_names(tmp_path: Path) -> None:
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("a/b", "a.b", "A_b", "..")]
    (tmp_path / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    result = toolgen("import", "tools.json", "--from", "mcp", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["out/a_b.yaml", "out/a.b.yaml", "out/A_b_2.yaml", "out/tool.yaml"]
