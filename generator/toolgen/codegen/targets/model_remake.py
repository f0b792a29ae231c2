"""Model remake: after some tools' schemas changed, generate() over those tools alone and their modules made again.

A build whose models schema differs from the last one only inside the definitions of tools that own their module
outright (nothing of theirs shared with another tool or the core) makes the models of just those tools and keeps the
rest of the split as it was. The result must be byte for byte what generate() over the whole schema and the split
give, or `toolgen check` on a clean checkout would find drift; so every step that could differ is checked, and any
doubt returns None and the caller makes the whole module:

- the attribute names of property names outside ASCII, chosen over the whole schema, are those the kept modules
  were made with (one tool's new name can move another's: `größe` is `groe`, or `groe2` once a `groe` exists);
  and no key that hides a builtin type (a field `int`): generate() then imports that type under an alias for the
  whole module;
- every class generate() made bears a name toolgen gave (a title in the schema): generate() names what has no title
  over the whole module (`Model1`), which the tools alone would not reproduce; and it imported no name under
  another, which it does when a name of the module takes the imported one;
- the tools' new definitions refer to nothing outside themselves, no two of them share one, every definition of
  the schema their modules held they still reach, and no definition of any other module mentions a name they
  newly take (a mention puts definitions in one module: model_modules.py).

The tools' definitions keep the order generate() gives them, which does not depend on other tools; their module's
imports are those generate() wrote for them alone, a subset of what it writes for the whole module, and the format
stage keeps of either only what the module uses.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from toolgen.codegen.targets.model_modules import (
    FOLDER,
    ModelModules,
    core_module,
    module_imports,
    parse_definitions,
    reached_from,
    tool_module,
    tool_module_names,
)
from toolgen.codegen.targets.models import attribute_aliases, render_models, schema_facts
from toolgen.ir.model import ROOT_MODEL, Project, Tool
from toolgen.ir.modelnames import closure_of_refs
from toolgen.source.schemawalk import walk

# A key (a property name, a definition's name) a field or class could take that hides a builtin type the models
# write bare: once any field of the whole module takes such a name, generate() imports the builtin under another
# (`from builtins import int as int_aliased`) and every model of the module writes that, the tools' alone or not.
# `list` and `dict` are not among them: every type that names them becomes FrozenList or FrozenMap, whichever
# name generate() wrote (model_rewrites.py), and the format stage drops the import left unused.
_SHADOWING_KEY = re.compile(r'(?<!\\)"_*(?i:str|int|float|bool|bytes|tuple|set|frozenset|complex)_*"\s*:')


def foreign_aliases(project: Project, defs: Mapping[str, Any]) -> str:
    """The attribute names of the schema's property names outside ASCII, as JSON ("{}" for an ASCII schema):
    chosen over the whole schema, each clear of every ASCII name's, so that one tool's new name can move another's."""
    if project.models_schema.isascii():
        return "{}"
    return json.dumps(attribute_aliases(schema_facts({"$defs": dict(defs)})[0]), ensure_ascii=False, sort_keys=True)


def shadowed(project: Project) -> str:
    """ "yes" when a key of the models schema may hide a builtin type the models write (_SHADOWING_KEY), else "no"."""
    return "yes" if _SHADOWING_KEY.search(project.models_schema) else "no"


def remake_tools(
    project: Project,
    header: str,
    defs: Mapping[str, Any],
    kept: ModelModules,
    changed: Collection[str],
    aliases: str,
) -> ModelModules | None:
    """`kept` with the modules of the tools named in `changed` made again from `defs` (the models schema's
    definitions), or None when the result could differ from a split of the whole module. `aliases` are the
    schema's attribute names of names outside ASCII (foreign_aliases), which must be those `kept` was made with."""
    tools = [tool for tool in project.tools if tool.name in changed]
    read = _read_layout(kept.layout)
    if read is None:
        return None
    sole, mentions, core_names, head = read
    if len(tools) != len(set(changed)) or not all(tool.name in sole for tool in tools):
        return None
    if kept.layout.get("aliases") != aliases:
        return None
    # Both ways: the modules kept were written with the alias as much as new ones would be.
    if shadowed(project) != "no" or kept.layout.get("shadowed") != "no":
        return None
    needed = closure_of_refs(defs, [root for tool in tools for root in _roots(tool)])
    if needed & set(project.canonical_models):
        return None
    schema = {"$defs": {name: value for name, value in defs.items() if name in needed}, "title": ROOT_MODEL}
    modules = tool_module_names(project)
    package = project.package
    old_names = {
        tool.name: {n for n, home in kept.homes.items() if home == _home(package, modules[tool.name])} for tool in tools
    }
    others = (set(kept.homes) - set().union(*old_names.values())) | set(core_names)
    sub_project = dataclasses.replace(
        project,
        models_schema=json.dumps(schema, ensure_ascii=False),
        canonical_models=(),
        unions=tuple(union for union in project.unions if union.name in needed),
        tools=tuple(tools),
    )
    source = render_models(sub_project, header, json.loads(aliases))
    preamble, definitions = parse_definitions(source, frozenset(others))
    made = {definition.name for definition in definitions}
    if made & others or not made <= _titles(schema) or _renames_an_import(preamble):
        return None
    if any(not definition.refers_to <= made for definition in definitions):
        return None
    edges = {definition.name: definition.refers_to for definition in definitions}
    owned = {tool.name: reached_from(_roots(tool), edges) for tool in tools}
    if sum(len(found) for found in owned.values()) != len(made) or set().union(*owned.values()) != made:
        return None  # a definition two of the tools share, or one neither reaches
    if any(name in defs and name not in owned[tool.name] for tool in tools for name in old_names[tool.name]):
        return None  # a definition of the schema the tool no longer reaches: the whole split moves it to the core
    homes = {name: home for name, home in kept.homes.items() if name not in set().union(*old_names.values())}
    for tool in tools:
        homes.update(dict.fromkeys(owned[tool.name], _home(package, modules[tool.name])))
    own_modules = {modules[tool.name] for tool in tools}
    mentioned_elsewhere = {word for module, words in mentions.items() if module not in own_modules for word in words}
    if any((owned[tool.name] - old_names[tool.name]) & mentioned_elsewhere for tool in tools):
        return None
    files = dict(kept.files)
    imports = module_imports(preamble, package)
    for tool in tools:
        found = [definition for definition in definitions if definition.name in owned[tool.name]]
        text = tool_module(header, imports, found, homes, package, frozenset({tool.name}))
        files[f"{FOLDER}/{modules[tool.name]}.py"] = text
        mentions[modules[tool.name]] = sorted({word for definition in found for word in definition.mentions})
    if set(homes) != set(kept.homes):
        files["models.py"] = core_module(head, core_names, homes, package)
    layout = {**kept.layout, "mentions": json.dumps(mentions, ensure_ascii=False)}
    return ModelModules(files, homes, layout)


def _read_layout(layout: Mapping[str, str]) -> tuple[set[str], dict[str, list[str]], list[str], str] | None:
    """What the split kept for a remake (ModelModules.layout), or None when it is not there or not as written."""
    try:
        sole, mentions, core_names = (json.loads(layout[key]) for key in ("sole", "mentions", "core_names"))
        head = layout["core_head"]
    except (KeyError, ValueError):
        return None
    listed = isinstance(sole, list) and isinstance(core_names, list) and isinstance(mentions, dict)
    if not listed or not all(isinstance(name, str) for name in [*sole, *core_names]):
        return None
    if not all(isinstance(words, list) and all(isinstance(w, str) for w in words) for words in mentions.values()):
        return None
    return set(sole), mentions, core_names, head


def _roots(tool: Tool) -> list[str]:
    return [tool.args_model, *([tool.result_model] if tool.result_model else [])]


def _home(package: str, module: str) -> str:
    return f"{package}.{FOLDER}.{module}"


def _renames_an_import(preamble: str) -> bool:
    """Whether generate() imported a name under another (`import date as date_aliased`): it does so when a name
    of the module takes the imported one, which the whole module may not share with these tools alone."""
    return any(
        alias.asname is not None
        for node in ast.parse(preamble).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    )


def _titles(schema: Any) -> set[str]:
    """The class names toolgen gave: every title in the schema."""
    return {sub["title"] for sub, _ in walk(schema) if isinstance(sub, dict) and isinstance(sub.get("title"), str)}
