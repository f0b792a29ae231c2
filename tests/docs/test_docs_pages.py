"""The site's pages: every page in the nav, code only by inclusion, every command line one the real programs take."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest
from support.docs_commands import command_problems, line_problem, simple_commands
from support.docs_site import (
    DOCS,
    PROJECT_TOOLS,
    SNIPPETS,
    blocks,
    include_target,
    included,
    nav_pages,
    pages,
    snippet_files,
)
from support.projects import REPO_ROOT

from toolgen.cli.main import main as toolgen_cli

# Code a reader would copy lives in files the tests run or check; a page may hold only output and command lines.
INCLUDED_ONLY = {"python", "py", "yaml", "yml", "json", "toml", "ini", "cfg"}
PAGES = pages()


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def test_the_site_has_pages() -> None:
    assert len(PAGES) >= 15, [_rel(page) for page in PAGES]


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    listed = nav_pages()
    on_disk = sorted(str(page.relative_to(DOCS)) for page in PAGES)
    assert sorted(set(listed)) == on_disk
    assert len(listed) == len(set(listed)), "a page is listed twice in mkdocs.yml's nav"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_code_is_included_from_files_that_exist(page: Path) -> None:
    problems = []
    for block in blocks(page):
        for line in block.lines:
            if not line.strip():
                continue
            target = included(line)
            if target is None and block.language not in INCLUDED_ONLY:
                continue
            if target is None:
                problems.append(f"{block.where}: ```{block.language} blocks include a snippet file, got {line!r}")
            elif include_target(target) is None:
                problems.append(f"{block.where}: {target} is neither under docs/snippets nor the repository's root")
    assert not problems, "\n".join(problems)


def test_every_snippet_file_is_shown_or_used() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    shown = {
        target
        for page in PAGES
        for block in blocks(page)
        for line in block.lines
        if (target := included(line)) is not None
    }
    runnable = "\n".join(path.read_text(encoding="utf-8") for path in snippet_files(".py", ".sh"))
    orphans = [
        _rel(path)
        for path in snippet_files(".py", ".sh", ".yaml", ".yml", ".json", ".toml", ".out", ".txt")
        if str(path.relative_to(SNIPPETS)) not in shown and path.name not in runnable and path.name not in text
    ]
    assert not orphans, f"snippet files no page includes and no snippet reads: {orphans}"


def test_the_project_tools_are_yaml_tool_files() -> None:
    for tool in PROJECT_TOOLS.glob("*") if PROJECT_TOOLS.is_dir() else []:
        assert tool.suffix == ".yaml", f"{_rel(tool)}: the docs project takes tools as .yaml files"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_command_lines_are_ones_the_programs_take(page: Path, package_help: dict[str, str]) -> None:
    problems = command_problems(blocks(page), package_help)
    assert not problems, "\n".join(problems)


def test_the_command_line_checks_refuse_what_the_programs_refuse(package_help: dict[str, str]) -> None:
    assert line_problem(["toolgen", "build", "--force"], package_help) is None
    assert line_problem(["toolgen", "validate", "logs/missing", "--as", "message"], package_help) is None
    assert line_problem(["toolgen", "--help"], package_help) is None
    assert "No such command" in (line_problem(["toolgen", "biuld"], package_help) or "")
    assert "No such option" in (line_problem(["toolgen", "build", "--forse"], package_help) or "")
    assert "jsn" in (line_problem(["toolgen", "check", "--format", "jsn"], package_help) or "")
    assert line_problem(["python", "-m", "toolgen_sdk", "serve", "--port", "0"], package_help) is None
    assert "--colour" in (line_problem(["python", "-m", "toolgen_sdk", "--colour", "hi"], package_help) or "")
    assert "unknown program" in (line_problem(["rm", "-rf", "/"], package_help) or "")
    assert simple_commands("toolgen init && toolgen build | cat  # ok") == [
        ["toolgen", "init"],
        ["toolgen", "build"],
        ["cat"],
    ]


def test_fences_are_read_inside_lists_and_admonitions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text('- a step:\n\n    ```python\n    --8<-- "x/y.py"\n    ```\n\n```text\nout\n```\n', encoding="utf-8")
    found = list(blocks(page))
    assert [(block.language, block.lines) for block in found] == [
        ("python", ('--8<-- "x/y.py"',)),
        ("text", ("out",)),
    ]
    assert included('--8<-- "agent-loop/approve.py:setup"') == "agent-loop/approve.py"


def test_the_cli_page_gets_every_command_from_click() -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import cli_reference
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert cli_reference.MARKER in page, "docs/cli.md has no marker for the generated option tables"
    rendered = cli_reference.on_page_markdown(page, None, None, None)
    context = click.Context(toolgen_cli)
    for name in toolgen_cli.list_commands(context):
        assert f"### `toolgen {name}`" in rendered
        command = toolgen_cli.get_command(context, name)
        assert command is not None
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden:
                assert f"`{parameter.opts[-1]}`" in rendered, (name, parameter.opts)
