"""The models cache: the models modules of the last build, by a hash of everything that made them.

datamodel-code-generator's generate() over the whole models schema, toolgen's rewrites of its module and the split
into one module per tool are most of a build's time, and their output is a function of the schema, the names the
split reads, the header and the code and libraries that make it (generator_fingerprint: toolgen's source, the
versions of datamodel-code-generator, pydantic and the others). A build whose key matches reads the modules back;
one whose schema differs only inside the definitions of some tools has just those tools' models made again
(model_remake.py), when that is sure to give the same bytes; anything else makes them all. Any difference in what
the keys cover is a different key, and an entry that does not read back whole (a truncated or edited file) counts
as none.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgen.codegen.kept import KeptEntry, hashed
from toolgen.codegen.targets.model_modules import FOLDER, ModelModules, tool_module_names
from toolgen.ir.model import Project

# Bumped whenever what the keys cover or an entry holds changes.
_KEY_FORMAT = 5


def _named(project: Project, header: str) -> dict[str, Any]:
    from toolgen.project.manifest import generator_fingerprint

    return {
        "format": _KEY_FORMAT,
        "maker": generator_fingerprint(),
        "python": sys.version,  # the rewrites and the split read the module with this Python's `ast`
        "header": header,
        "package": project.package,
        "canonical": list(project.canonical_models),
        "unions": [[union.name, union.discriminator, *union.members] for union in project.unions],
        "tools": [[tool.name, tool.args_model, tool.result_model] for tool in project.tools],
    }


def models_key(project: Project, header: str) -> str:
    """A hash of everything render_models and split_models read, and of what makes them (toolgen's code included)."""
    return hashed(_named(project, header), project.models_schema)


def _layout_key(project: Project, header: str) -> str:
    """models_key without the schema: what an entry must share with a build for some of its tools to be remade."""
    return hashed(_named(project, header))


def _definition_digests(defs: dict[str, Any]) -> list[list[str]]:
    """Each definition's name and a hash of its JSON, in the schema's order (which generate() follows)."""
    return [
        [name, hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()]
        for name, value in defs.items()
    ]


class ModelsCache:
    """The models modules of the last build that kept them, and their keys.

    `models` reads it; `save` writes what the last call made, once the build has committed: a build that fails
    leaves it as it was, and `check` only reads it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entry = KeptEntry(path)

    def lookup(self, project: Project, header: str) -> ModelModules | None:
        """The modules the file holds for exactly this project's models; None for any other."""
        found = self._read(project, header)
        return found[0] if found is not None and found[1].get("whole") == models_key(project, header) else None

    def models(self, project: Project, header: str, make: Callable[[], ModelModules]) -> ModelModules:
        """The models modules of `project`: kept, kept but for the tools whose schemas changed, or `make()`."""
        found = self._read(project, header)
        if found is not None and found[1].get("whole") == models_key(project, header):
            return found[0]
        defs = json.loads(project.models_schema)["$defs"]
        digests = _definition_digests(defs)
        from toolgen.codegen.targets.model_remake import foreign_aliases, remake_tools, shadowed

        aliases = foreign_aliases(project, defs)
        made = None
        if found is not None:
            kept, held = found
            changed = _changed_tools(project, kept, held.get("definitions", ""), digests)
            if changed:
                made = remake_tools(project, header, defs, kept, changed, aliases)
        if made is None:
            made = make()
        made = ModelModules(made.files, made.homes, {**made.layout, "aliases": aliases, "shadowed": shadowed(project)})
        self._keep(project, header, made, digests)
        return made

    def keep(self, project: Project, header: str, models: ModelModules) -> None:
        """What `save` writes: `models` as the modules of `project`."""
        self._keep(project, header, models, _definition_digests(json.loads(project.models_schema)["$defs"]))

    def _keep(self, project: Project, header: str, models: ModelModules, digests: list[list[str]]) -> None:
        held = {"whole": models_key(project, header), "definitions": json.dumps(digests)}
        self._entry.keep(_layout_key(project, header), [models.files, models.homes, models.layout, held])

    def _read(self, project: Project, header: str) -> tuple[ModelModules, dict[str, str]] | None:
        parts = self._entry.lookup(_layout_key(project, header))
        if parts is None or len(parts) != 4:
            return None
        return ModelModules(parts[0], parts[1], parts[2]), parts[3]

    def save(self) -> None:
        self._entry.save()


def _changed_tools(project: Project, kept: ModelModules, held: str, digests: list[list[str]]) -> set[str]:
    """The tools whose definitions alone differ from the entry's, or none when anything else does."""
    try:
        before = json.loads(held)
    except ValueError:
        return set()
    # Read only as written: a list of [name, digest] pairs, one for each definition of the schema now.
    if not isinstance(before, list) or len(before) != len(digests):
        return set()
    pairs = zip(before, digests, strict=True)
    if not all(isinstance(pair, list) and len(pair) == 2 and pair[0] == name for pair, (name, _) in pairs):
        return set()
    tool_of_home = {f"{project.package}.{FOLDER}.{module}": tool for tool, module in tool_module_names(project).items()}
    changed: set[str] = set()
    for (name, digest), pair in zip(digests, before, strict=True):
        if pair != [name, digest]:
            tool = tool_of_home.get(kept.homes.get(name, ""))
            if tool is None:
                return set()  # a canonical or shared definition, or one no tool module holds
            changed.add(tool)
    return changed
