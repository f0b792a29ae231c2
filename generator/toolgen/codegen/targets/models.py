"""Models target: every model of the project in one datamodel-code-generator call.

One call, not one per group of tools: generate() costs the same per generated class at 1,000 and 3,000
tools, so groups would save nothing, and its names for nested classes (`...Item2`) and its class order are
decided over the whole module, which groups joined afterwards would not reproduce.
"""

from __future__ import annotations

import warnings
from typing import Any

import pydantic

from toolgen.codegen.targets.model_rewrites import rewrite_models
from toolgen.core.errors import ExternalToolError
from toolgen.core.names import NameRegistry, property_attributes, snake
from toolgen.ir.model import ROOT_MODEL, Project, thaw
from toolgen.ir.modelnames import NOT_NULL_KEY
from toolgen.source.schemawalk import walk

# Attribute names a pydantic model owns; a field may not take them.
_BASE_MODEL_ATTRIBUTES = frozenset(name for name in dir(pydantic.BaseModel) if not name.startswith("__")) | {
    "model_config"
}


def schema_facts(schema: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """Every property name of the schema, and the titles of the models that refuse null, in one walk."""
    names: set[str] = set()
    not_null: list[str] = []
    for sub, _ in walk(schema):
        if not isinstance(sub, dict):
            continue
        properties = sub.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
        if sub.get(NOT_NULL_KEY) and isinstance(sub.get("title"), str):
            not_null.append(sub["title"])
    return frozenset(names), tuple(not_null)


def attribute_aliases(names: frozenset[str]) -> dict[str, str]:
    """ASCII attribute names for non-ASCII property names; Python would NFKC-fold them (`ﬁle` is `file`).

    The map applies to every model, so each target is unique across the schema and never one that an
    ASCII property name would become.
    """
    foreign = sorted(name for name in names if not name.isascii())
    if not foreign:  # the usual case: no need to snake-case every property name of the project
        return {}
    taken = {snake(name) for name in names if name.isascii()} | _BASE_MODEL_ATTRIBUTES
    registry = NameRegistry(frozenset(taken))
    return {name: registry.claim(snake(name, fallback="field")) for name in foreign}


def attribute_orders(schema: Any, aliases: dict[str, str]) -> dict[str, str]:
    """`Class.property` aliases that give a property spelled as its attribute that attribute, in each model where
    another property makes the same one (core/names.property_attributes): left alone, generate() hands it to
    whichever is written first, so `a-b` before `a_b` would take `a_b` from the property called so."""
    scoped: dict[str, str] = {}
    for sub, _ in walk(schema):
        properties = sub.get("properties") if isinstance(sub, dict) else None
        if not isinstance(properties, dict) or len(properties) < 2 or not isinstance(sub.get("title"), str):
            continue
        found = property_attributes(list(properties), aliases)
        if found is not None:
            # Those spelled as their attribute are left to generate(): no other property takes it now.
            scoped.update({f"{sub['title']}.{name}": given for name, given in found.given.items() if given != name})
    return scoped


def render_models(project: Project, header: str, aliases: dict[str, str] | None = None) -> str:
    """The models module of `project`: generate() over its models schema, with toolgen's rewrites.

    `aliases` are the attribute names of property names outside ASCII; by default those of the schema's own names
    (a part of a schema gets those of the whole, which are chosen over all of its names)."""
    # Imported here: datamodel-code-generator costs ~0.5 s to import and only builds need it.
    from datamodel_code_generator import InputFileType, PythonVersion, generate
    from datamodel_code_generator.enums import DataModelType
    from datamodel_code_generator.parser import LiteralType

    schema = thaw(project.models_schema)
    runtime = f"{project.package}._runtime"
    property_names, not_null_titles = schema_facts(schema)
    base_map: dict[str, str | list[str]] = dict.fromkeys(not_null_titles, f"{runtime}.NullRefusingModel")
    base_map.update({name: f"{runtime}.CanonicalModel" for name in project.canonical_models})
    base_map["ToolCallFunction"] = f"{runtime}.FunctionCallBase"
    foreign = attribute_aliases(property_names) if aliases is None else aliases
    attributes = {**foreign, **attribute_orders(schema, foreign)}
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
                enum_field_as_literal=LiteralType.All,
                use_schema_description=True,
                # Field(description=...) is an escaped literal that reaches model_json_schema(); a
                # docstring would carry raw control characters and reach nothing at run time.
                use_field_description=False,
                aliases=attributes,
                model_extra_keys={NOT_NULL_KEY},
                keep_model_order=True,
                disable_timestamp=True,
                custom_file_header=header,
                formatters=[],
                capitalise_enum_members=False,
                # A field with a default is not `X | None` unless its schema allows null: absent, it takes the
                # default; null it refuses by its type (`unit: Literal["celsius", "fahrenheit"] = "celsius"`).
                strict_nullable=True,
            )
    except Exception as error:  # noqa: BLE001 - any failure inside the generator is reported as its own
        raise ExternalToolError(f"datamodel-code-generator failed: {error}") from error
    if not isinstance(output, str):
        raise ExternalToolError("datamodel-code-generator returned no single module")
    # A tool's own arguments or result stay a model class: the registry validates and checks instances of it.
    tool_models = {t.args_model for t in project.tools} | {t.result_model for t in project.tools}
    aliased = [union.name for union in project.unions if union.name not in tool_models]
    return rewrite_models(output, ROOT_MODEL, aliased, frozenset(m for m in tool_models if m), project.package)
