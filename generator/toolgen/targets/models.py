"""Models target: every model of the project in one datamodel-code-generator call."""

from __future__ import annotations

import ast
import warnings

from toolgen.errors import ExternalToolError
from toolgen.ir import Project, thaw

ROOT_CLASS = "ToolgenRoot"


def _drop_class(source: str, name: str) -> str:
    """Remove the placeholder model generated for the bundle's root, which no one uses."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            start = node.lineno - 1 - len(node.decorator_list)
            assert node.end_lineno is not None
            del lines[start : node.end_lineno]
            break
    return "".join(lines)


def render_models(project: Project, header: str) -> str:
    # Imported here: datamodel-code-generator costs ~0.5 s to import and only builds need it.
    from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

    schema = thaw(project.models_schema)
    runtime = f"{project.package}._runtime"
    base_map: dict[str, str | list[str]] = {name: f"{runtime}.CanonicalModel" for name in project.canonical_models}
    base_map["ToolCallFunction"] = f"{runtime}.FunctionCallBase"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output = generate(
                schema,
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.PydanticV2BaseModel,
                target_python_version=PythonVersion.PY_310,
                base_class=f"{runtime}.SchemaModel",
                base_class_map=base_map,
                snake_case_field=True,
                use_title_as_name=True,
                use_annotated=True,
                field_constraints=True,
                enum_field_as_literal="all",
                use_schema_description=True,
                use_field_description=True,
                keep_model_order=True,
                disable_timestamp=True,
                custom_file_header=header,
                formatters=[],
                capitalise_enum_members=False,
            )
    except Exception as error:  # noqa: BLE001 - any failure inside the generator is reported as its own
        raise ExternalToolError(f"datamodel-code-generator failed: {error}") from error
    if not isinstance(output, str):
        raise ExternalToolError("datamodel-code-generator returned no single module")
    return _drop_class(output, ROOT_CLASS)
