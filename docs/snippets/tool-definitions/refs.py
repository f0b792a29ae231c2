"""$ref across files: read inside the project and ref_roots only; remote documents never fetched."""

import json
import shutil
import tempfile
from pathlib import Path

import toolgen

here = Path(__file__).parent
with tempfile.TemporaryDirectory() as folder:
    project = Path(folder, "project")
    toolgen.init_project(project)
    for name in ("shared.yaml", "shipping.yaml"):
        shutil.copy(here / name, project / "schemas" / "tools")
    exported, _ = toolgen.export(project, provider="anthropic")
    (ship,) = [tool for tool in exported.tools if tool["name"] == "ship_parcel"]
    # The exported schema stands alone: the other file's definition is carried under $defs.
    print(json.dumps(ship["input_schema"]["properties"]), sorted(ship["input_schema"]["$defs"]))

    # --8<-- [start:outside]
    Path(folder, "secret.json").write_text('{"type": "string"}')
    tool = project / "schemas" / "tools" / "sneaky.yaml"
    tool.write_text(
        "name: sneaky\ndescription: d\ninputSchema: {type: object, properties: {x: {$ref: '../../../secret.json'}}}\n"
    )
    try:
        toolgen.export(project, provider="anthropic")
    except toolgen.InvalidInputError as error:
        for found in error.diagnostics:
            print(found.path, found.line, found.col, found.rule, found.message.replace(folder, "/tmp/x"))
    # --8<-- [end:outside]
    assert found.rule == "ref-outside"
