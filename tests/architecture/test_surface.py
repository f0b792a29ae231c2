"""toolgen's public surface: every library verb in `toolgen`, options by keyword, lazy to import, typed for mypy;
the command line reaches the library through `toolgen.api` alone."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.projects import REPO_ROOT

import toolgen
import toolgen.api
import toolgen.core.errors
from toolgen import ExitCode

# What each verb acts on, its positional parameters; every other parameter is keyword-only.
ACTS_ON = {
    "breaking": ("against",),
    "breaking_snapshot": ("root",),
    "build": ("root",),
    "check": ("root",),
    "check_mcp_lock": ("root", "server"),
    "conformance": ("folders",),
    "convert": ("path",),
    "convert_noted": ("path",),
    "decode": ("path",),
    "did_you_mean": ("value", "choices"),
    "encode": ("path",),
    "encode_noted": ("path",),
    "export": ("root",),
    "import_tools": ("root", "source"),
    "init_project": ("root",),
    "lint": ("root",),
    "parse_dask_address": ("address",),
    "payload_sources": ("paths",),
    "validate": ("paths",),
}
# Loading any of these is what made `import toolgen` and `toolgen --help` slow.
HEAVY = ("jinja2", "datamodel_code_generator", "jsonschema", "toolgen.api")
# The pipeline's stages and what they load: `toolgen --help` and `import toolgen.api` load none of them.
PIPELINE = (
    "jinja2",
    "datamodel_code_generator",
    "jsonschema",
    "yaml",
    "pydantic",
    "toolgen.source",
    "toolgen.project",
    "toolgen.ir",
    "toolgen.codegen",
    "toolgen.output",
    "toolgen.policy",
    "toolgen.payloads",
    "toolgen.importing",
)
CLI = REPO_ROOT / "generator" / "toolgen" / "cli"


def _verbs() -> dict[str, object]:
    return {
        name: value
        for name, value in vars(toolgen.api).items()
        if inspect.isfunction(value) and value.__module__ == "toolgen.api" and not name.startswith("_")
    }


def test_every_api_verb_is_exported_from_toolgen() -> None:
    verbs = _verbs()
    assert sorted(verbs) == sorted(ACTS_ON), "a new verb in toolgen.api needs its row in ACTS_ON and in __init__"
    for name, verb in verbs.items():
        assert name in toolgen.__all__, f"toolgen.{name} is not exported: add it to _HOMES and __all__"
        assert getattr(toolgen, name) is verb


def test_options_are_keyword_only() -> None:
    for name, positional in ACTS_ON.items():
        parameters = inspect.signature(getattr(toolgen, name)).parameters.values()
        leading = tuple(p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY)
        assert leading == positional, f"toolgen.{name}: only {positional} may be positional, not {leading}"


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert toolgen.__all__ == sorted(toolgen.__all__)
    for name in toolgen.__all__:
        assert getattr(toolgen, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        toolgen.nonexistent  # noqa: B018 - the lookup is the test


def test_the_errors_users_catch_are_exported_with_their_exit_codes() -> None:
    errors = [
        value
        for value in vars(toolgen.core.errors).values()
        if isinstance(value, type) and issubclass(value, toolgen.ToolgenError)
    ]
    assert len(errors) > 1
    for error in errors:
        assert getattr(toolgen, error.__name__) is error
        assert isinstance(error.exit_code, ExitCode), error
    assert toolgen.InvalidInputError([]).exit_code == ExitCode.INVALID_INPUT == 3


def test_exit_codes_are_the_documented_numbers() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "FINDINGS": 1,
        "USAGE": 2,
        "INVALID_INPUT": 3,
        "INTERNAL": 4,
        "INTERRUPTED": 130,
    }


def _loaded(code: str, heavy: tuple[str, ...] = HEAVY) -> set[str]:
    """The `heavy` modules (or packages) a fresh interpreter has loaded after running `code`."""
    script = code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    modules = set(done.stdout.split())
    return {name for name in heavy if name in modules or any(m.startswith(name + ".") for m in modules)}


def test_import_toolgen_loads_nothing_heavy() -> None:
    assert _loaded("import toolgen; toolgen.ExitCode; toolgen.ToolgenError") == set()


def test_help_loads_nothing_heavy() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolgen", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    assert "Usage:" in done.stdout
    # -X importtime writes one line per module: "import time: self | cumulative | <indent>name"
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.count("|") == 2}
    assert "toolgen.cli.main" in imported and "toolgen.api" in imported
    heavy = sorted(name for name in imported if any(name == p or name.startswith(p + ".") for p in PIPELINE))
    assert heavy == [], f"`toolgen --help` imported {heavy}: import them inside the command that needs them"


def test_the_api_loads_no_stage_until_a_verb_runs() -> None:
    assert _loaded("import toolgen.api; toolgen.api.ExitCode; toolgen.api.NAMES", PIPELINE) == set()
    # the other side, so the check cannot pass by misspelling what it looks for
    assert _loaded("import toolgen.api; toolgen.api.Tally", PIPELINE) >= {"pydantic", "toolgen.payloads"}


def test_a_verb_loads_the_api_and_its_stages_load_the_rest() -> None:
    # the other side of the two tests above, so they cannot pass by misspelling what they look for; each verb
    # imports its own stages when it runs (tests/architecture/test_startup_imports.py)
    assert _loaded("import toolgen; toolgen.build") == {"toolgen.api"}
    assert _loaded("import toolgen.codegen.render, toolgen.ir.lower") == {
        "jinja2"
    }  # jsonschema: only for a shape check


def test_every_verb_keeps_its_name_whatever_is_imported_first() -> None:
    # Every module of the generator imported before the verbs are read: no package or module binds a name on
    # `toolgen` that a verb has, so `toolgen.validate` and `toolgen.lint` are the API's functions whatever ran first.
    script = textwrap.dedent(
        """
        import importlib, pkgutil
        import toolgen.payloads.validation, toolgen.policy.lint
        from toolgen.payloads.validation.local import Tally
        for module in pkgutil.walk_packages(toolgen.__path__, "toolgen."):
            if not module.name.startswith("toolgen.runtime"):
                importlib.import_module(module.name)
        import toolgen, toolgen.api
        for name in toolgen.__all__:
            value = getattr(toolgen, name)
            assert not isinstance(value, type(toolgen)), name
        assert toolgen.validate is toolgen.api.validate and toolgen.lint is toolgen.api.lint
        assert toolgen.conformance is toolgen.api.conformance
        assert toolgen.Tally is Tally
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO_ROOT)


def test_mypy_sees_the_surface_types(tmp_path: Path, mypy_cache: str) -> None:
    user = tmp_path / "user.py"
    user.write_text(
        textwrap.dedent(
            """
            import toolgen

            result: toolgen.BuildResult = toolgen.build(".", force=True)
            reveal_type(toolgen.check("."))
            reveal_type(toolgen.ExitCode.FINDINGS)
            toolgen.build(".", "toolgen.yaml")
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", mypy_cache, str(user)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert 'Revealed type is "toolgen.output.drift.CheckResult"' in done.stdout, done.stdout
    assert "toolgen.core.errors.ExitCode.FINDINGS" in done.stdout, done.stdout
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'Too many positional arguments for "build"' in errors[0], done.stdout


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    """Every module an import statement names, wherever it is (in functions, under TYPE_CHECKING too);
    `from toolgen import api` names `toolgen.api`, a relative import its absolute name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # every CLI module is in the package toolgen.cli: `.` is toolgen.cli, `..` is toolgen
            package = ".".join(["toolgen", "cli"][: 3 - node.level]) if node.level else ""
            base = ".".join(part for part in (package, node.module or "") if part)
            found += [(node.lineno, f"{base}.{alias.name}" if base == "toolgen" else base) for alias in node.names]
    return found


def _cli_may_import(name: str) -> bool:
    return not name.startswith("toolgen") or name in {"toolgen.api", "toolgen.cli"} or name.startswith("toolgen.cli.")


def test_the_command_line_imports_only_the_api_and_itself() -> None:
    modules = sorted(CLI.rglob("*.py"))
    assert {path.name for path in modules} >= {"main.py", "printers.py", "options.py"}, "found no CLI modules"
    wrong = [
        f"{path.relative_to(REPO_ROOT).as_posix()}:{line} imports {name}"
        for path in modules
        for line, name in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if not _cli_may_import(name)
    ]
    assert wrong == [], "the command line reaches the library through toolgen.api only:\n" + "\n".join(wrong)


def test_the_import_rule_sees_every_spelling() -> None:
    # the other side of the test above: imports inside functions, under TYPE_CHECKING, and `from toolgen import`
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import click\n"
        "from toolgen import api, core\n"
        "if TYPE_CHECKING:\n    from toolgen.output.drift import CheckResult\n"
        "def verb():\n    import toolgen.payloads.codec\n    from . import printers\n    from .. import ir\n"
    )
    refused = [name for _, name in _imports(tree) if not _cli_may_import(name)]
    assert refused == ["toolgen.core", "toolgen.output.drift", "toolgen.payloads.codec", "toolgen.ir"]


def test_the_public_surface_is_listed_once_and_the_type_checkers_imports_follow_it() -> None:
    # _SURFACE is the listing; __all__ and the lazy lookup are made from it, and the imports type checkers read
    # must name the same names from the same modules, each re-exported as itself.
    tree = ast.parse((REPO_ROOT / "generator" / "toolgen" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    }
    listed = {name: module for module, names in toolgen._SURFACE.items() for name in names}
    assert imported == listed
    assert toolgen.__all__ == sorted(listed)
    for name, module in listed.items():
        assert getattr(toolgen, name) is getattr(importlib.import_module(module), name), name
