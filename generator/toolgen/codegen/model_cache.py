"""The models cache: the models modules of the last build, by a hash of everything that made them.

datamodel-code-generator's generate() over the whole models schema, toolgen's rewrites of its module and the split
into one module per tool are most of a build's time, and their output is a function of the schema, the names the
split reads, the header and the code and libraries that make it (generator_fingerprint: toolgen's source, the
versions of datamodel-code-generator, pydantic and the others). A build whose key matches reads the modules back
instead; any difference in what the key covers is a different key, and an entry that does not read back whole (a
truncated or edited file) counts as none.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolgen.codegen.kept import KeptEntry, hashed
from toolgen.codegen.targets.model_modules import ModelModules
from toolgen.ir.model import Project

# Bumped whenever what the key covers changes.
_KEY_FORMAT = 1


def models_key(project: Project, header: str) -> str:
    """A hash of everything render_models and split_models read, and of what makes them (toolgen's code included)."""
    from toolgen.project.manifest import generator_fingerprint

    named = {
        "format": _KEY_FORMAT,
        "maker": generator_fingerprint(),
        "python": sys.version,  # the rewrites and the split read the module with this Python's `ast`
        "header": header,
        "package": project.package,
        "canonical": list(project.canonical_models),
        "unions": [union.name for union in project.unions],
        "tools": [[tool.name, tool.args_model, tool.result_model] for tool in project.tools],
    }
    return hashed(named, project.models_schema)


class ModelsCache:
    """The models modules of the last build that kept them, and their key.

    render reads it; `save` writes what the last render made, once the build has committed: a build that fails
    leaves it as it was, and `check` only reads it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entry = KeptEntry(path)

    def lookup(self, key: str) -> ModelModules | None:
        """The modules the file holds under `key`; None when it holds another key or does not read back whole."""
        parts = self._entry.lookup(key)
        if parts is None or len(parts) != 2:
            return None
        return ModelModules(parts[0], parts[1])

    def keep(self, key: str, models: ModelModules) -> None:
        """What `save` writes."""
        self._entry.keep(key, [models.files, models.homes])

    def save(self) -> None:
        self._entry.save()
