"""Every optional package, missing, is one line naming the extra that brings it: at each entry point of the command
line (exit 4, no traceback) and of the Python API (an ImportError saying the same).

A package is made missing by a finder at the head of sys.meta_path, installed by a sitecustomize on PYTHONPATH,
that refuses its import as Python refuses a package that is not installed: nothing is uninstalled, and each entry
point runs in a fresh interpreter, as a user starts it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.projects import REPO_ROOT, SOURCE_PACKAGE

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

DEADLINE = 120
SITECUSTOMIZE = """\
import os
import sys

_MISSING = frozenset(filter(None, os.environ.get("TOOLGEN_TEST_MISSING", "").split(",")))


class _NotInstalled:
    \"\"\"Refuses the named top-level packages (and everything under them) as if they were not installed.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _MISSING:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""
ENDPOINT = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m")


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("missing-packages")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return folder


def _env(hook: Path, missing: str, *path: Path) -> dict[str, str]:
    # No AWS or model keys from the machine: an entry point must get as far as the missing package by itself.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "OPENAI_", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (hook, *path))
    env["TOOLGEN_TEST_MISSING"] = missing
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DEADLINE, check=False
    )


def _one_line_naming(result: subprocess.CompletedProcess[str], extra: str, missing: str) -> str:
    assert result.returncode == 4, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    (line,) = lines
    assert f"needs the `{extra}` extra ({missing} is not installed)" in line, line
    assert f"pip install 'toolgen[{extra}]'" in line, line
    assert "Traceback" not in result.stderr + result.stdout
    return line


# (missing packages, the generated package's arguments, the extra named, the package named missing)
PACKAGE_ENTRY_POINTS = [
    pytest.param("httpx", [*ENDPOINT, "hi"], "http", "httpx", id="prompt --base-url, no httpx"),
    pytest.param("httpcore", [*ENDPOINT, "hi"], "http", "httpcore", id="prompt --base-url, no httpcore"),
    pytest.param(
        "botocore",
        [*ENDPOINT, "--wire", "bedrock-converse", "hi"],
        "bedrock",
        "botocore",
        id="prompt --wire bedrock-converse, no botocore",
    ),
    pytest.param("mcp", ["mcp"], "mcp", "mcp", id="mcp, no mcp"),
    pytest.param("anyio", ["mcp"], "mcp", "anyio", id="mcp, no anyio"),
    pytest.param("mcp", ["mcp", "--http", "127.0.0.1:9"], "mcp", "mcp", id="mcp --http, no mcp"),
    pytest.param("dbos", ["serve", "--port", "18999"], "serve", "dbos", id="serve, no dbos"),
    pytest.param("starlette", ["serve", "--port", "18999"], "serve", "starlette", id="serve, no starlette"),
    pytest.param("uvicorn", ["serve", "--port", "18999"], "serve", "uvicorn", id="serve, no uvicorn"),
    pytest.param("sqlalchemy", ["serve", "--port", "18999"], "serve", "sqlalchemy", id="serve, no sqlalchemy"),
    pytest.param("httpx", ["serve", "--port", "18999", *ENDPOINT], "serve", "httpx", id="serve --base-url, no httpx"),
]


@pytest.mark.parametrize(("missing", "args", "extra", "named"), PACKAGE_ENTRY_POINTS)
def test_the_generated_package_names_the_extra_in_one_line(
    source_build: Path, hook: Path, tmp_path: Path, missing: str, args: list[str], extra: str, named: str
) -> None:
    # Run from a folder of its own: `serve` keeps its state (.toolgen-state/) where it starts.
    result = _run([sys.executable, "-m", SOURCE_PACKAGE, *args], _env(hook, missing, source_build), tmp_path)
    line = _one_line_naming(result, extra, named)
    assert line.startswith(f"python -m {SOURCE_PACKAGE}"), line


@pytest.mark.parametrize(
    ("missing", "named"), [("mcp", "mcp"), ("anyio", "anyio"), ("mcp_types", "mcp_types")], ids=str
)
def test_toolgen_import_mcp_names_the_extra_in_one_line(hook: Path, tmp_path: Path, missing: str, named: str) -> None:
    server = [sys.executable, "-c", "pass"]
    result = _run([sys.executable, "-m", "toolgen", "import", "mcp", "--", *server], _env(hook, missing), tmp_path)
    line = _one_line_naming(result, "mcp", named)
    assert line.startswith("toolgen: ")


@pytest.mark.parametrize("missing", ["distributed", "dask", "fsspec", "tornado"])
def test_toolgen_validate_dask_names_the_extra_in_one_line(
    source_build: Path, hook: Path, tmp_path: Path, missing: str
) -> None:
    record = tmp_path / "record.jsonl"
    record.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    args = ["validate", "-C", str(source_build.parent), "--dask", "local:1", "--as", "message", str(record)]
    result = _run([sys.executable, "-m", "toolgen", *args], _env(hook, missing), tmp_path)
    assert result.returncode == 4, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"No module named '{missing}'" in lines[0] and "pip install 'toolgen[dask]'" in lines[0], lines[0]


API = """\
import sys
from {package} import _runtime as rt

def named(make):
    try:
        make()
    except ImportError as error:
        print(f"{{type(error).__name__}}|{{getattr(error, 'extra', '')}}|{{error}}")
    else:
        print("no error")

case = sys.argv[1]
if case == "HTTPModel":
    named(lambda: rt.HTTPModel("http://127.0.0.1:9/v1", "m"))
elif case == "SigV4":
    named(lambda: rt.HTTPModel("http://127.0.0.1:9", "m", wire="bedrock", region="us-east-1"))
elif case == "google_token":
    named(lambda: rt.google_token())
elif case == "mcp_tools":
    named(lambda: rt.mcp_tools(rt.Registry({{}}), [sys.executable, "-c", "pass"]))
elif case == "serve_mcp":
    named(lambda: rt.mcp_server(rt.Registry({{}})))
elif case == "DurableRuns":
    named(lambda: rt.DurableRuns(rt.Registry({{}}), rt.ScriptedModel([]), database_url="sqlite:///:memory:"))
elif case == "service_app":
    named(lambda: rt.service_app(None))
elif case == "tracing":
    turn = rt.assistant_turn("ok")
    messages = [{{"role": "user", "content": "hi"}}]
    named(lambda: rt.run(messages, rt.ScriptedModel([turn]), rt.Registry({{}}), tracer_provider=object()))
    # Not asked to trace: no opentelemetry is no spans, and the run goes on.
    print(rt.run(messages, rt.ScriptedModel([turn]), rt.Registry({{}})).stop_reason)
"""

# (the API entry point, the missing package, the extra its ImportError names)
API_ENTRY_POINTS = [
    ("HTTPModel", "httpx", "http"),
    ("SigV4", "botocore", "bedrock"),
    ("google_token", "google", "vertex"),
    ("mcp_tools", "mcp", "mcp"),
    ("mcp_tools", "anyio", "mcp"),
    ("serve_mcp", "mcp", "mcp"),
    ("DurableRuns", "dbos", "durable"),
    ("DurableRuns", "sqlalchemy", "durable"),
    ("service_app", "starlette", "serve"),
    ("tracing", "opentelemetry", "otel"),
]


@pytest.mark.parametrize(("entry", "missing", "extra"), API_ENTRY_POINTS, ids=lambda v: str(v))
def test_the_python_api_raises_an_import_error_naming_the_extra(
    source_build: Path, hook: Path, tmp_path: Path, entry: str, missing: str, extra: str
) -> None:
    code = API.format(package=SOURCE_PACKAGE)
    result = _run([sys.executable, "-c", code, entry], _env(hook, missing, source_build), tmp_path)
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    kind, named, message = first.split("|", 2)
    assert (kind, named) == ("MissingExtra", extra), first
    assert f"needs the `{extra}` extra ({missing} is not installed)" in message
    assert f"pip install 'toolgen[{extra}]'" in message
    if entry == "tracing":
        assert rest == ["finished"]


def test_a_missing_module_of_another_kind_is_not_blamed_on_an_extra(source_build: Path, hook: Path) -> None:
    """The extra is named only for its own packages: a bug that imports a module no extra brings shows as it is."""
    code = textwrap.dedent(
        f"""
        from {SOURCE_PACKAGE}._runtime.extras import optional_module
        try:
            optional_module("no_such_module_anywhere", "http", "HTTPModel")
        except ImportError as error:
            print(type(error).__name__, error.name)
        """
    )
    result = _run([sys.executable, "-c", code], _env(hook, "", source_build), source_build)
    assert result.stdout.split() == ["ModuleNotFoundError", "no_such_module_anywhere"], result.stderr


def test_every_extra_that_reaches_a_model_over_http_brings_the_http_extra() -> None:
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert [r for r in extras["http"] if r.startswith("httpx")], extras["http"]
    for extra in ("bedrock", "vertex", "serve"):
        assert "toolgen[http]" in extras[extra], (extra, extras[extra])
