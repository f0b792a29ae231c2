"""`toolgen init` keeps the project's formatters and linters off generated/: the real ruff, black and isort pass at
the project root after a build, and the user's own pyproject.toml is only added to, never rewritten."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolgen

tomllib = pytest.importorskip("tomllib", reason="reading TOML back needs Python 3.11's tomllib")

SCRIPTS = Path(sys.executable).parent
ENV = {**os.environ, "PATH": os.pathsep.join([str(SCRIPTS), os.environ.get("PATH", "")])}
# The tools as a user's pre-commit runs them: on the folder, and on files passed by name.
SOME_FILES = ("generated/toolgen_sdk/models.py", "generated/toolgen_sdk/_runtime/app/main.py")
COMMANDS = {
    "ruff": (("ruff", "check", "--no-cache"), ("ruff", "format", "--no-cache", "--check")),
    "black": (("black", "--check", "--quiet"),),
    "isort": (("isort", "--check-only", "--quiet"),),
}
USER_PYPROJECT = """\
# The application's own settings: every comment stays.
[project]
name = "shop"  # the distribution
version = "1.0"

[tool.ruff]
line-length = 100  # wider than toolgen's 88, so ruff format would rewrite every generated file

[tool.ruff.lint]
select = ["E", "F", "I"]

[tool.black]
line-length = 100
"""


def tool_missing(name: str) -> bool:
    return shutil.which(name, path=ENV["PATH"]) is None


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=root, capture_output=True, text=True, env=ENV, check=False)


def init_and_build(root: Path) -> toolgen.InitResult:
    result = toolgen.init_project(root)
    toolgen.build(root)
    return result


def assert_formatters_pass(root: Path) -> None:
    for tool, commands in COMMANDS.items():
        if tool_missing(tool):
            continue  # black and isort are optional here; ruff comes with toolgen
        for command in commands:
            for targets in ((".",), SOME_FILES):
                done = run(root, *command, *targets)
                assert done.returncode == 0, (command, targets, done.stdout[-2000:], done.stderr[-2000:])


def formatter_notes(result: toolgen.InitResult) -> list[str]:
    """The notes about formatter settings (the pin's own note depends on how this toolgen was installed)."""
    return [note for note in result.notes if not note.startswith("requirements-toolgen.txt")]


def test_a_fresh_project_passes_ruff_black_and_isort_at_its_root(tmp_path: Path) -> None:
    result = init_and_build(tmp_path)
    assert [p.name for p in result.created] == [
        "toolgen.yaml",
        "get_current_weather.yaml",
        "pyproject.toml",
        ".gitignore",
        "requirements-toolgen.txt",
    ]
    assert result.updated == () and formatter_notes(result) == []
    settings = tomllib.loads((tmp_path / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert settings["ruff"]["extend-exclude"] == ["generated"]
    assert settings["black"]["extend-exclude"] == "^/generated/"
    assert "generated/*" in settings["isort"]["extend_skip_glob"]
    assert_formatters_pass(tmp_path)


def test_the_users_pyproject_is_added_to_and_still_formats_their_code(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(USER_PYPROJECT, encoding="utf-8")
    (tmp_path / "app.py").write_text("import sys\n\nprint(sys.argv)\n", encoding="utf-8")
    result = init_and_build(tmp_path)
    assert result.updated == (tmp_path / "pyproject.toml",) and formatter_notes(result) == []
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    # Every line of theirs is there, in their order: only lines were added.
    lines = iter(text.splitlines())
    assert all(any(mine == theirs for theirs in lines) for mine in USER_PYPROJECT.splitlines())
    data = tomllib.loads(text)
    assert data["project"] == {"name": "shop", "version": "1.0"}
    assert data["tool"]["ruff"]["line-length"] == 100 and data["tool"]["ruff"]["lint"] == {"select": ["E", "F", "I"]}
    assert data["tool"]["black"]["line-length"] == 100 and data["tool"]["black"]["force-exclude"] == "^/generated/"
    assert_formatters_pass(tmp_path)
    # Their own code is still checked: the exclusion is of generated/ alone.
    (tmp_path / "app.py").write_text("import sys\nprint( sys.argv )\n", encoding="utf-8")
    assert run(tmp_path, "ruff", "format", "--no-cache", "--check", ".").returncode == 1


def test_without_the_settings_the_formatters_would_rewrite_the_package(tmp_path: Path) -> None:
    init_and_build(tmp_path)
    (tmp_path / "pyproject.toml").write_text(USER_PYPROJECT, encoding="utf-8")
    assert run(tmp_path, "ruff", "format", "--no-cache", "--check", ".").returncode == 1


def test_ruffs_own_file_gets_the_ruff_setting_at_its_top(tmp_path: Path) -> None:
    mine = "# ruff, as this project likes it\nline-length = 100\n\n[lint]\nselect = ['E']\n"
    (tmp_path / "ruff.toml").write_text(mine, encoding="utf-8")
    result = init_and_build(tmp_path)
    assert result.updated == (tmp_path / "ruff.toml",)
    text = (tmp_path / "ruff.toml").read_text(encoding="utf-8")
    assert text.endswith(mine)
    assert tomllib.loads(text)["extend-exclude"] == ["generated"]
    assert "ruff" not in tomllib.loads((tmp_path / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert_formatters_pass(tmp_path)


def test_an_exclusion_of_their_own_is_left_alone_and_named(tmp_path: Path) -> None:
    mine = '[tool.black]\nextend-exclude = "^/build/"\n'
    (tmp_path / "pyproject.toml").write_text(mine, encoding="utf-8")
    (tmp_path / ".isort.cfg").write_text("[settings]\nprofile = black\n", encoding="utf-8")
    result = toolgen.init_project(tmp_path)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.startswith(mine) and tomllib.loads(text)["tool"]["black"] == {"extend-exclude": "^/build/"}
    assert any(note.startswith("pyproject.toml already sets `extend-exclude`") for note in result.notes), result.notes
    assert any(note.startswith(".isort.cfg is isort's configuration here") for note in result.notes), result.notes
    cli = subprocess.run(
        [sys.executable, "-m", "toolgen", "init", "-C", str(tmp_path / "again")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0 and "created pyproject.toml" in cli.stdout


@pytest.mark.parametrize("name", ["toolgen.yaml", "schemas/tools/get_current_weather.yaml"])
def test_init_that_refuses_leaves_pyproject_untouched(tmp_path: Path, name: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x: 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(USER_PYPROJECT, encoding="utf-8")
    with pytest.raises(toolgen.ProjectExistsError):
        toolgen.init_project(tmp_path)
    assert (tmp_path / "pyproject.toml").read_text(encoding="utf-8") == USER_PYPROJECT


def test_a_pyproject_that_is_no_toml_is_left_as_it_is_and_said_to_be_broken(tmp_path: Path) -> None:
    broken = '[project]\nname = "x"\n[tool.ruff\n'
    (tmp_path / "pyproject.toml").write_text(broken, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "toolgen", "init"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pyproject.toml").read_text(encoding="utf-8") == broken
    first = result.stderr.splitlines()[0]
    assert first.startswith("toolgen: pyproject.toml is not valid TOML (")
    assert "at line 3, column 11" in first
    assert "toolgen: pyproject.toml: add to [tool.ruff]: " in result.stderr
