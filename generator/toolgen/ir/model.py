"""The intermediate representation: frozen, hashable, the one contract between the front end and the targets."""

from __future__ import annotations

from dataclasses import dataclass

from toolgen.core.jsoncopy import freeze as freeze
from toolgen.core.jsoncopy import thaw as thaw

# The placeholder model for the root of the bundled schema; the models target removes it.
ROOT_MODEL = "ToolgenRoot"
# Names the generated package defines itself; no schema may take them for a model.
RESERVED_NAMES = frozenset(
    {
        ROOT_MODEL,
        "CanonicalModel",
        "NullRefusingModel",
        "SchemaModel",
        "FunctionCallBase",
        "ToolSpec",
        "ValidationProblem",
        "ToolgenValidationError",
        "TOOLS",
        "Any",
        "Annotated",
        "Field",
        "Literal",
        "RootModel",
        "ConfigDict",
        # The runtime's frozen containers, which the models' types name (targets/model_rewrites.py).
        "FrozenList",
        "FrozenMap",
        "FrozenAny",
        "FrozenSize",
        # What else the models modules import and name: the rewrites' aliases, the deferred root models, and the
        # models module's lazy table of the tools' models.
        "TypeAlias",
        "TypeAliasType",
        "StringConstraints",
        "DeferredRootModel",
        "TYPE_CHECKING",
        "lazy_attributes",
    }
)

# Every public member of the runtime's Registry (the generated Tools' base), methods and the attributes its
# methods set alike: a tool's attribute of one of these names is renamed (`pool2`), since a property of that name
# would hide the member from the registry's own code (the sync loop calls `dispatcher`) or fail as __init__
# assigns it (`pool`). Names starting with `_` need no entry: a tool's attribute never does (core/names.snake).
# Listed rather than read from the class at build time: a member added to Registry renames that tool's attribute
# in every package built after, a change to make on purpose; tests/generator/test_tooldef_truth_registry_names.py
# fails until this list and the class agree.
REGISTRY_MEMBERS = frozenset(
    {
        "add",
        "adispatch",
        "definitions",
        "dispatch",
        "dispatcher",
        "entry",
        "max_error_chars",
        "pool",
        "remove",
        "require_approval",
        "require_bound",
        "revision",
        "tool_definitions",
        "unbound",
    }
)


@dataclass(frozen=True)
class Tool:
    name: str
    stem: str
    args_model: str
    result_model: str | None
    title: str | None
    description: str | None
    input_schema: str
    output_schema: str | None
    return_direct: bool
    timeout: float | None
    requires_approval: bool
    strict: bool | None
    meta: str
    annotations: str
    source: str
    # Sent in OpenAI strict mode (`strict: true`, or `export: strict`): null for an optional argument means absent.
    null_as_absent: bool = False
    # The models do not enforce every keyword of the schema: validation also runs a JSON Schema check.
    check_input: bool = False
    check_output: bool = False
    # The input schema as written, when it can be checked so (it reaches no file): the JSON Schema check then sees
    # $id, anchors, $dynamicRef and meta-schema references as the author wrote them, not their bundled form.
    check_schema: str | None = None
    # The vendored remote documents check_schema reaches (a JSON object: URI -> document), when there are any.
    check_resources: str | None = None
    # The JSON Schema draft each check reads its schema as (`input`/`output` -> `$schema` URI), when the tool
    # declares one other than 2020-12: bundling drops `$schema`, and `dependencies` or array `items` need it.
    dialects: str | None = None
    # The meta keys folded into the description providers are sent (JSON: true or a list), when any are.
    describe_meta: str | None = None


@dataclass(frozen=True)
class Union:
    """A named union of models told apart by the constant value of one property."""

    name: str
    discriminator: str
    members: tuple[str, ...]


@dataclass(frozen=True)
class Project:
    package: str
    models_schema: str
    canonical_models: tuple[str, ...]
    unions: tuple[Union, ...]
    tools: tuple[Tool, ...]
    # toolgen.yaml `mcp:`: the MCP lock built into the package (its JSON, frozen), and what to do on drift.
    mcp_lock: str | None = None
    mcp_on_drift: str = "refuse"
    # toolgen.yaml `package_version`: the package's `__version__` (and MCP serverInfo's version).
    version: str = "0.1.0"
