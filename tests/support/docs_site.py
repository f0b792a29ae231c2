"""The documentation site as the docs tests read it: its pages, their fenced blocks, its snippets and their project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from support.cli_in_process import toolgen_in
from support.projects import REPO_ROOT

DOCS = REPO_ROOT / "docs"
SNIPPETS = DOCS / "snippets"
# Tool files every snippet's project gets beside the example tool `toolgen init` writes.
PROJECT_TOOLS = SNIPPETS / "project" / "tools"
# What mkdocs leaves out of the site (mkdocs.yml's exclude_docs): snippet sources, the hook, the scripts.
NOT_PAGES = ("snippets", "hooks", "scripts")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it opens, its language and its lines with the fence's indent removed."""

    page: Path
    line: int
    language: str
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO_ROOT)}:{self.line}"


def pages() -> list[Path]:
    """Every page of the site: the Markdown files under docs/ that mkdocs builds."""
    return sorted(path for path in DOCS.rglob("*.md") if path.relative_to(DOCS).parts[0] not in NOT_PAGES)


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists, as paths relative to docs/."""
    # mkdocs.yml may carry Python tags for extensions; the nav is plain data either way.
    config = yaml.load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_PermissiveLoader)
    found: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, list):
            for item in entry:
                walk(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)

    walk(config["nav"])
    return found


class _PermissiveLoader(yaml.SafeLoader):
    """A safe loader that reads `!!python/...` tags as plain values instead of refusing the file."""


_PermissiveLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def blocks(page: Path) -> Iterator[Block]:
    """The fenced blocks of a page, nested fences (in lists and admonitions) included."""
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        language = opening["info"].strip().split(" ")[0].lower() if opening["info"].strip() else ""
        body: list[str] = []
        index += 1
        while index < len(lines):
            text = lines[index]
            if text.strip().startswith(fence[0] * len(fence)) and text.strip().strip(fence[0]) == "":
                break
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
            index += 1
        yield Block(page, index - len(body), language, tuple(body))
        index += 1


def included(line: str) -> str | None:
    """The file a `--8<-- "path"` line includes (a section's `:name` removed), or None for any other line."""
    match = re.fullmatch(r'\s*--8<--\s+"(?P<path>[^"]+)"\s*', line)
    if match is None:
        return None
    path = match["path"]
    # A section (`file.py:name`) or a line range (`file.py:3:9`) follows the last colon that is not a drive's.
    return re.sub(r"(:[A-Za-z0-9_-]+)+$", "", path)


def include_target(path: str) -> Path | None:
    """Where pymdownx.snippets finds an included path: docs/snippets first, then the repository's root."""
    for base in (SNIPPETS, REPO_ROOT):
        candidate = base / path
        if candidate.is_file():
            return candidate
    return None


def snippet_files(*suffixes: str) -> list[Path]:
    """The snippet files with these suffixes, the project's tool files excepted."""
    return sorted(
        path
        for path in SNIPPETS.rglob("*")
        if path.is_file() and path.suffix in suffixes and PROJECT_TOOLS not in path.parents
    )


@pytest.fixture(scope="session")
def docs_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project every Python snippet runs in: `toolgen init`, the docs' extra tools, `toolgen build`."""
    root = tmp_path_factory.mktemp("docs-project")
    initialized = toolgen_in(root, "init")
    assert initialized.returncode == 0, initialized.stderr
    for tool in sorted(PROJECT_TOOLS.glob("*.yaml")) if PROJECT_TOOLS.is_dir() else []:
        shutil.copyfile(tool, root / "schemas" / "tools" / tool.name)
    built = toolgen_in(root, "build", "--quiet")
    assert built.returncode == 0, built.stdout + built.stderr
    return root


@pytest.fixture(scope="session")
def package_help(docs_project: Path) -> dict[str, str]:
    """`python -m toolgen_sdk [serve|mcp] --help` of the docs project, by subcommand ("" for the prompt form)."""
    helps: dict[str, str] = {}
    for subcommand in ("", "serve", "mcp"):
        command = [sys.executable, "-m", "toolgen_sdk", *([subcommand] if subcommand else []), "--help"]
        ran = run_in(docs_project, *command, seconds=60)
        assert ran.returncode == 0, ran.stderr
        helps[subcommand] = ran.stdout
    return helps


def snippet_environment(project: Path) -> dict[str, str]:
    """The environment a snippet runs in: this Python's scripts first on PATH, the generated package importable."""
    environment = dict(os.environ)
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    environment["PYTHONPATH"] = str(project / "generated")
    environment.pop("TOOLGEN_RELEASE_WHEEL", None)
    return environment


def run_in(folder: Path, *command: str, seconds: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a snippet's command in `folder` as a reader would: toolgen on PATH, the folder's package importable."""
    return subprocess.run(
        list(command),
        cwd=folder,
        env=snippet_environment(folder),
        capture_output=True,
        text=True,
        timeout=seconds,
        check=False,
    )
