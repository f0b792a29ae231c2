"""`python -m <package> "prompt"` calling a tool that has no handler says so beside the answer (stderr, once a
tool), naming the tool and the documented way to bind one: `@tools.<tool>.handler` on a Tools() passed with
--tools (docs/agent-loop.md); the registry's own answer says no handler is bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.projects import REPO_ROOT, Project

TOOLS = """\
tools:
  - name: listInvoices
    description: List the open invoices of an account.
    inputSchema: {type: object, properties: {account: {type: string}}}
  - name: lookup_customer
    description: Find a customer by email address.
    inputSchema: {type: object, properties: {email: {type: string}}}
"""
# The example tool the demo has a handler for; a package built without the demo has none for it.
WEATHER = REPO_ROOT / "schemas" / "tools" / "get_current_weather.yaml"
HANDLERS = """\
from shop_sdk import Tools

tools = Tools()


@tools.lookup_customer.handler
def lookup(args, ctx):
    return {"found": True}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("shop") / "project"
    root.mkdir()
    project = Project(root, "shop_sdk")
    project.write("schemas/shop.yaml", TOOLS)
    project.write("schemas/weather.yaml", WEATHER.read_text(encoding="utf-8"))
    project.write("shop_handlers.py", HANDLERS)
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    return project


def _run(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project.root / "generated"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", project.package, *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_without_tools_the_note_names_the_tool_and_how_to_bind_it_once(shop: Project) -> None:
    ran = _run(shop, "What's the weather in Paris and Oslo?")
    assert ran.returncode == 0, ran.stderr
    # Two calls of one tool, one note: it is said once a tool.
    assert ran.stdout.count("- get_current_weather failed: Error: ") == 2
    assert ran.stderr == (
        "note: no handler is bound for the tool 'get_current_weather' (without --tools, the tools have no "
        "handlers): bind one with @tools.get_current_weather.handler on a Tools() of yours and pass it with "
        "--tools module:attribute\n"
    )


def test_with_tools_the_note_says_the_bound_tools_lack_it(shop: Project) -> None:
    ran = _run(shop, "--tools", "shop_handlers:tools", "call listInvoices")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == (
        "note: no handler is bound for the tool 'listInvoices' in --tools shop_handlers:tools: "
        "bind one there with @tools.list_invoices.handler\n"
    )


def test_a_bound_tool_has_no_note(shop: Project) -> None:
    ran = _run(shop, "--tools", "shop_handlers:tools", "call lookup_customer")
    assert ran.returncode == 0, ran.stderr
    assert "- lookup_customer returned:" in ran.stdout
    assert ran.stderr == ""


def test_in_a_demo_package_the_note_says_the_demo_covers_the_example_tools_only(tmp_path: Path) -> None:
    project = Project(tmp_path, "shop_sdk")
    project.write("schemas/shop.yaml", TOOLS)
    project.write("schemas/weather.yaml", WEATHER.read_text(encoding="utf-8"))
    with (tmp_path / "toolgen.yaml").open("a", encoding="utf-8") as config:
        config.write("demo: true\n")
    assert project.cli("build").returncode == 0
    ran = _run(project, "call lookup_customer")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == (
        "note: no handler is bound for the tool 'lookup_customer' (the demo's handlers cover the example tools "
        "only): bind one with @tools.lookup_customer.handler on a Tools() of yours and pass it with --tools "
        "module:attribute\n"
    )
    weather = _run(project, "What's the weather in Paris?")
    assert weather.returncode == 0, weather.stderr
    assert weather.stderr == ""
