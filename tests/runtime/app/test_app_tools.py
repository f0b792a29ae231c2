"""`python -m <package>` for a project's own tools: `--tools module:attribute` binds the user's handlers, and the
offline model calls the tool the prompt asks for with arguments its schema accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.projects import Project

from toolgen.runtime.schema.examples import example_value

SHOP_TOOLS = """\
tools:
  - name: lookup_customer
    title: Customer lookup
    description: Find a customer by email address.
    inputSchema:
      type: object
      properties:
        email: {type: string, format: email}
        tier: {type: string, enum: [gold, silver]}
      required: [email, tier]
  - name: list_invoices
    description: List the open invoices of an account, newest first.
    inputSchema:
      type: object
      properties:
        account: {type: string, pattern: "^[0-9]+$", minLength: 4}
        limit: {type: integer, minimum: 5, maximum: 10}
      required: [account, limit]
"""

HANDLERS = """\
from shop_sdk import ListInvoicesArgs, LookupCustomerArgs, ToolContext, Tools

tools = Tools()


@tools.lookup_customer.handler
def lookup(args: LookupCustomerArgs, ctx: ToolContext) -> dict:
    return {"found": args.email, "tier": args.tier}


@tools.list_invoices.handler
def invoices(args: ListInvoicesArgs, ctx: ToolContext) -> dict:
    return {"account": args.account, "shown": args.limit}


def make_tools() -> Tools:
    return tools


not_tools = 42


def broken() -> Tools:
    raise RuntimeError("no database")
"""


@pytest.fixture(scope="module")
def shop_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop project with its handlers, built once for this module; each test gets a copy."""
    root = tmp_path_factory.mktemp("shop") / "project"
    root.mkdir()
    project = Project(root, "shop_sdk")
    project.write("schemas/shop.yaml", SHOP_TOOLS)
    project.write("shop_handlers.py", HANDLERS)
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    return root


@pytest.fixture
def shop(shop_once: Path, tmp_path: Path) -> Project:
    return Project.copy_of(shop_once, tmp_path / "project", "shop_sdk")


def run_shop(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m shop_sdk ...` from the project root, the generated package importable as an application has it."""
    env = {**os.environ, "PYTHONPATH": str(project.root / "generated"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "shop_sdk", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_tools_option_binds_the_handlers_and_the_prompt_picks_the_tool(shop: Project) -> None:
    invoices = run_shop(shop, "--tools", "shop_handlers:tools", "Which invoices are open?")
    assert invoices.returncode == 0, invoices.stderr
    assert "- list_invoices returned: account: 1111, shown: 5" in invoices.stdout
    assert "lookup_customer" not in invoices.stdout
    customer = run_shop(shop, "--tools", "shop_handlers:tools", "Look up this customer by their email")
    assert customer.returncode == 0, customer.stderr
    assert "- lookup_customer returned: found: user@example.com, tier: gold" in customer.stdout
    # A zero-argument callable returning the bound tools works the same; a tool named outright wins.
    named = run_shop(shop, "--tools", "shop_handlers:make_tools", "call list_invoices for me")
    assert named.returncode == 0, named.stderr
    assert "- list_invoices returned:" in named.stdout


def test_without_tools_option_the_chosen_tool_is_reported_unbound(shop: Project) -> None:
    result = run_shop(shop, "Which invoices are open?")
    assert result.returncode == 0, result.stderr
    assert (
        "list_invoices failed: Error: no handler is bound for the tool 'list_invoices', so it did not run"
        in result.stdout
    )


@pytest.mark.parametrize(
    ("spec", "sentence"),
    [
        ("missing_module:tools", "--tools 'missing_module:tools': no module named 'missing_module'"),
        ("shop_handlers:nothing", "--tools 'shop_handlers:nothing': module 'shop_handlers' has no attribute 'nothing'"),
        ("shop_handlers:not_tools", "not_tools is int, not this package's Tools (or a function returning one)"),
        ("shop_handlers:broken", "calling broken() raised RuntimeError: no database"),
        ("shop_handlers", "--tools 'shop_handlers' should be 'module:attribute'"),
    ],
)
def test_tools_option_says_what_is_wrong_and_exits_2(shop: Project, spec: str, sentence: str) -> None:
    result = run_shop(shop, "--tools", spec, "Which invoices are open?")
    assert result.returncode == 2, result.stdout + result.stderr
    assert sentence in result.stderr
    assert "Traceback" not in result.stderr


def test_tools_from_another_package_are_the_wrong_type(shop: Project, make_project: Callable[..., Project]) -> None:
    other = make_project("other_sdk")
    other.write("schemas/shop.yaml", SHOP_TOOLS)
    assert other.cli("build").returncode == 0
    (shop.root / "foreign.py").write_text("from other_sdk import Tools\ntools = Tools()\n", encoding="utf-8")
    env_path = os.pathsep.join([str(shop.root / "generated"), str(other.root / "generated")])
    result = subprocess.run(
        [sys.executable, "-m", "shop_sdk", "--tools", "foreign:tools", "hi"],
        cwd=shop.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
        check=False,
    )
    assert result.returncode == 2 and "not this package's Tools" in result.stderr


SCHEMAS: list[dict[str, Any]] = [
    {"type": "string", "format": "email"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{6}$"},
    {"type": "string", "minLength": 12, "maxLength": 14},
    {"type": "string", "maxLength": 3},
    {"type": "integer", "minimum": 100, "multipleOf": 7},
    {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 2},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": "integer", "maximum": -3},
    {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 1},
    {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]},
    {"type": ["null", "boolean"]},
    {"const": "fixed"},
    {"examples": ["given"], "type": "string"},
    {
        "type": "object",
        "properties": {"when": {"$ref": "#/$defs/day"}, "note": {"type": "string"}},
        "required": ["when"],
        "$defs": {"day": {"type": "string", "format": "date"}},
    },
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
        ],
        "unevaluatedProperties": False,
    },
    {
        "type": "object",
        "properties": {"node": {"$ref": "#"}, "name": {"type": "string"}},
        "required": ["name"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:40] for s in SCHEMAS])
def test_example_value_is_valid_for_its_schema(schema: dict[str, Any]) -> None:
    value = example_value(schema)
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    errors = [
        error.message for error in jsonschema.Draft202012Validator(schema, format_checker=checker).iter_errors(value)
    ]
    assert errors == [], (value, errors)
