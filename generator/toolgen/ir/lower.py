"""Front end: config -> loaded files -> checked tool definitions -> bundled schemas -> the IR (`Project`)."""

from __future__ import annotations

import glob
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import toolgen.source.shapes as shapes
from toolgen.core.diagnostics import Diagnostic, Severity, has_errors
from toolgen.core.errors import InvalidInputError
from toolgen.core.names import NameRegistry, claim_in_turn, pascal, snake, tool_attributes, written_as_snake
from toolgen.core.positions import Pointer, pointer_text
from toolgen.core.resources import schemas_dir
from toolgen.ir.check_levels import AS_WRITTEN, BUNDLED, MODELS, unfollowed, unfollowed_in_bundle, written_check
from toolgen.ir.dynamic_refs import exported_inputs
from toolgen.ir.export_keys import own_keys
from toolgen.ir.model import REGISTRY_MEMBERS, RESERVED_NAMES, ROOT_MODEL, Project, Tool, freeze
from toolgen.ir.modelnames import assign_class_names, infer_unions, standalone, strip_annotations_for_models
from toolgen.project.config import Config, broken_links, display_path, glob_base, is_own_file, unmatched_input
from toolgen.project.input_digests import recorded_digests
from toolgen.project.mcp_pins import build_lock
from toolgen.source.checks import renamed_properties, unfit_defaults, unsupported_patterns
from toolgen.source.fidelity import models_are_exact, relax_for_models
from toolgen.source.keyword_typos import misspelled_keywords
from toolgen.source.load import Document, LoadError, load_file
from toolgen.source.normalize import nonstandard_types, normalize_types, suggestion
from toolgen.source.ref_depth import too_deep
from toolgen.source.resolve import Bundler, Resource
from toolgen.source.schemawalk import node_at
from toolgen.source.vocabulary import keywords_turned_off, without_keywords

CANONICAL_FILES = ("content.yaml", "tool_call.yaml", "usage.yaml", "message.yaml", "tool_definition.yaml")
MESSAGE_KINDS = ("SystemMessage", "UserMessage", "AssistantMessage", "ToolMessage")


@dataclass
class _Session:
    """The mutable state of one front-end run; never shared between runs."""

    config: Config
    documents: dict[Path, Document] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Reads a meta-schema by URI (vendored or published), once the bundler that knows `remotes` exists.
    meta_schema: Callable[[str], Any] | None = None
    # False for inputs known to have passed the meta-schema checks (see `lower`): they are left out.
    check_shapes: bool = True

    def load(self, path: Path, display: str) -> Document:
        key = path.resolve()
        if key not in self.documents:
            self.documents[key] = load_file(path, display)
        return self.documents[key]

    def display(self, path: Path) -> str:
        return display_path(self.config.root, path)

    def prepare(self, document: Document, pointer: Pointer, schema: Any) -> Any:
        """Normalize (when asked) and check one schema found at `pointer` in `document`."""
        schema = self._in_dialect(document, pointer, schema)
        if "types" in self.config.normalize:
            schema = normalize_types(
                schema,
                lambda where, message: self.diagnostics.append(
                    document.diagnostic((*pointer, *where), "normalized-type", message, Severity.WARNING)
                ),
            )
        found = nonstandard_types(schema)
        for where, name in found:
            self.diagnostics.append(
                document.diagnostic(
                    (*pointer, *where),
                    "nonstandard-type",
                    f"type {name!r} is not a JSON Schema type; {suggestion(name)}",
                )
            )
        for where, key, meant in misspelled_keywords(schema):
            problem = f"unknown schema keyword {key!r}; did you mean {meant!r}? JSON Schema ignores unknown keys, "
            problem += "so what it holds would not be checked (name your own annotations x-...)"
            self.diagnostics.append(document.key_diagnostic((*pointer, *where), "unknown-keyword", problem))
        for where, problem in unsupported_patterns(schema):
            self.diagnostics.append(document.diagnostic((*pointer, *where), "pattern-unsupported", problem))
        for where, problem in renamed_properties(schema):
            self.diagnostics.append(
                document.key_diagnostic((*pointer, *where), "name-collision", problem, Severity.WARNING)
            )
        for where, problem in unfit_defaults(schema):
            self.diagnostics.append(
                document.diagnostic((*pointer, *where), "default-invalid", problem, Severity.WARNING)
            )
        if self.check_shapes:
            # A non-standard type already has a clearer diagnostic than the meta-schema's.
            reported = [where for where, _ in found]
            self.diagnostics.extend(_meta().check_json_schema(document, schema, pointer, reported))
        return schema

    def _in_dialect(self, document: Document, pointer: Pointer, schema: Any) -> Any:
        """`schema` without the keywords its dialect turns off: the nearest `$schema` above it (or on it) names
        a meta-schema whose `$vocabulary` may leave validation out; a `$ref` target inherits its resource's."""
        dialect = None
        current = document.data
        for part in ("", *pointer):
            if part:
                _, current = node_at(current, (part,))
            if isinstance(current, dict) and isinstance(current.get("$schema"), str):
                dialect = current["$schema"]
        if dialect is None or self.meta_schema is None:
            return schema
        return without_keywords(schema, keywords_turned_off(self.meta_schema(dialect)))


def _input_files(session: _Session) -> list[Path]:
    root = session.config.root
    files: set[Path] = set()
    config = session.config
    unmatched: list[tuple[int, str]] = []
    own_only: list[tuple[int, str]] = []
    matched = False
    for index, pattern in enumerate(config.inputs):
        matches = [Path(p) for p in glob.glob(str(root / pattern), recursive=True)]
        if not matches and not glob.has_magic(pattern):
            line, col = config.input_positions[index] if index < len(config.input_positions) else (1, 1)
            session.diagnostics.append(
                Diagnostic(
                    config.display, line, col, Severity.ERROR, "file-missing", f"input {pattern!r} does not exist"
                )
            )
        session.diagnostics.extend(broken_links(config, index, pattern, matches))
        # The generated package's own files are never inputs: a pattern matching only them matches nothing.
        readable = [p.resolve() for p in matches if p.is_file()]
        found = {path for path in readable if not is_own_file(config, path)}
        if not found and readable:
            own_only.append((index, pattern))
        elif not found and glob.has_magic(pattern):
            unmatched.append((index, pattern))
        # Toolgen's own files count as matched: a package folder among the inputs is refused where it is written.
        matched = matched or bool(readable)
        files.update(found)
    session.diagnostics.extend(
        unmatched_input(config, index, pattern, Severity.WARNING if matched else Severity.ERROR)
        for index, pattern in unmatched
        # With tools found, a pattern of another extension beside them (*.json next to *.yaml) may match nothing
        # by design; one whose folder is missing is a typo or a stale path. With none found, nothing can build.
        if not matched or not (root / glob_base(pattern)).is_dir()
        # A project that only extends the canonical messages builds without tools.
        if matched or not config.message_extension
    )
    session.diagnostics.extend(
        unmatched_input(config, i, pattern, Severity.WARNING, own_only=True) for i, pattern in own_only
    )
    return sorted(files, key=lambda p: session.display(p))


def _meta() -> ModuleType:
    """The meta-schema checks, and jsonschema with them: loaded only when inputs are checked."""
    import toolgen.source.meta

    return toolgen.source.meta


def _tool_diagnostics(session: _Session, raw: shapes.RawTool) -> list[Diagnostic]:
    document = raw.document
    problems: list[Diagnostic] = []
    if not session.check_shapes:
        return problems
    present = {name for name, _, _ in raw.fields}
    for path, message in _meta().tool_shape_errors(raw.as_dict()):
        if not path:
            pointer = raw.pointer
        elif path[0] in present:
            pointer = (*raw.where(path[0]), *path[1:])
        else:  # a required field left out: named below the tool, placed at the tool
            pointer = (*raw.pointer, *path)
        problems.append(document.diagnostic(pointer, "tool-shape", f"{pointer_text(pointer) or '/'}: {message}"))
    return problems or list(_annotation_problems(raw))


# MCP's tool annotations and the type of each: an MCP client refuses a whole tool listing where one has another.
_ANNOTATION_TYPES = {
    "title": (str, "a string"),
    "readOnlyHint": (bool, "a boolean"),
    "destructiveHint": (bool, "a boolean"),
    "idempotentHint": (bool, "a boolean"),
    "openWorldHint": (bool, "a boolean"),
}


def _annotation_problems(raw: shapes.RawTool) -> Iterator[Diagnostic]:
    annotations = raw.value("annotations")
    for key, (kind, named) in _ANNOTATION_TYPES.items():
        if isinstance(annotations, dict) and key in annotations and not isinstance(annotations[key], kind):
            pointer = (*raw.where("annotations"), key)
            problem = f"{pointer_text(pointer)}: expected {named}, got {json.dumps(annotations[key], default=str)}"
            yield raw.document.diagnostic(pointer, "tool-shape", problem)


def _canonical(session: _Session, bundler: Bundler, names: NameRegistry) -> list[str]:
    models = []
    base = schemas_dir() / "canonical"
    for filename in CANONICAL_FILES:
        document = session.load(base / filename, f"<toolgen>/canonical/{filename}")
        resource = Resource(document, ())
        for name, schema in document.data["$defs"].items():
            names.claim(name)
            models.append(name)
            bundler.add_root(name, resource, ("$defs", name), schema)
    return models


def _extend_messages(session: _Session, bundler: Bundler) -> None:
    extension = session.config.message_extension
    if not extension:
        return
    try:
        document = session.load(session.config.root / extension, extension)
    except LoadError as error:
        session.diagnostics.append(error.diagnostic)
        return
    data = document.data
    if not isinstance(data, dict) or not isinstance(data.get("properties"), dict):
        session.diagnostics.append(
            document.diagnostic((), "extend-shape", "a message extension needs a `properties` mapping")
        )
        return
    problems = list(_meta().check_json_schema(document, {"type": "object", **data}, ())) if session.check_shapes else []
    if problems:
        session.diagnostics.extend(problems)
        return
    resource = Resource(document, ())
    rewritten = {
        key: bundler.rewrite(resource, ("properties", key), session.prepare(document, ("properties", key), value))
        for key, value in data["properties"].items()
    }
    for key, value in rewritten.items():
        for where, rule, problem in unfollowed(value, MODELS):
            session.diagnostics.append(document.diagnostic(("properties", key, *where), rule, problem))
    required = list(data.get("required", []))
    for index, name in enumerate(required):
        if name not in rewritten:
            session.diagnostics.append(
                document.diagnostic(
                    ("required", str(index)), "extend-shape", f"required {name!r} is not one of its properties"
                )
            )
    for key in rewritten:
        # camelCase is accepted for every canonical field, so `toolCallId` clashes with `tool_call_id`
        owners = [kind for kind in MESSAGE_KINDS if {key, snake(key)} & bundler.defs[kind]["properties"].keys()]
        if owners:
            message = f"{key!r} is already a field of {', '.join(owners)}; choose another name"
            session.diagnostics.append(document.key_diagnostic(("properties", key), "extend-conflict", message))
    for kind in MESSAGE_KINDS:
        schema = bundler.defs[kind]
        schema["properties"] = {**schema["properties"], **rewritten}
        schema["required"] = [
            *schema.get("required", []),
            *(r for r in required if r not in schema.get("required", [])),
        ]


def _tools(
    session: _Session, bundler: Bundler, names: NameRegistry
) -> list[tuple[shapes.RawTool, str, str, str | None, Any]]:
    raw_tools: list[shapes.RawTool] = []
    files = _input_files(session)
    for path in files:
        try:
            document = session.load(path, session.display(path))
        except LoadError as error:
            session.diagnostics.append(error.diagnostic)
            continue
        found, problems = shapes.extract_tools(document, "shapes" in session.config.normalize)
        session.diagnostics.extend(problems)
        raw_tools.extend(found)
    if files and not raw_tools and not session.config.message_extension and not has_errors(session.diagnostics):
        # Only shared $defs (or nothing) in every input: an SDK without tools is a misconfiguration, not a build.
        config = session.config
        line, col = config.input_positions[0] if config.input_positions else (1, 1)
        problem = f"the {len(files)} file(s) the inputs match hold no tool definition: the project has no tools"
        session.diagnostics.append(
            Diagnostic(config.display, line, col, Severity.ERROR, "no-tools", problem, "/inputs")
        )
    first_seen: dict[str, shapes.RawTool] = {}
    accepted = []
    for raw in raw_tools:
        problems = _tool_diagnostics(session, raw)
        session.diagnostics.extend(problems)
        if problems:
            continue
        name = raw.value("name")
        if name in first_seen:
            other = first_seen[name]
            line, col = other.document.locate(other.where("name"))
            session.diagnostics.append(
                raw.document.diagnostic(
                    raw.where("name"),
                    "duplicate-tool",
                    f"tool {name!r} is defined here and at {other.document.display}:{line}:{col}; names must be unique",
                )
            )
            continue
        first_seen[name] = raw
        accepted.append(raw)
    result = []
    ordered = sorted(accepted, key=lambda r: r.value("name"))
    stems = [pascal(raw.value("name"), fallback="Tool") for raw in ordered]
    first = [written_as_snake(raw.value("name")) for raw in ordered]
    every_args = claim_in_turn(names, [f"{stem}Args" for stem in stems], first)
    with_result = [(at, raw) for at, raw in enumerate(ordered) if raw.value("outputSchema") is not None]
    claimed_results = claim_in_turn(
        names, [f"{stems[at]}Result" for at, _ in with_result], [first[at] for at, _ in with_result]
    )
    results = {at: name for (at, _), name in zip(with_result, claimed_results, strict=True)}
    tool_names = [raw.value("name") for raw in ordered]
    attributes = tool_attributes(tool_names, REGISTRY_MEMBERS)
    for at, raw in enumerate(ordered):
        stem, args, returns = stems[at], every_args[at], results.get(at)
        said = [f"the class {args} because {stem}Args is already taken"] if args != f"{stem}Args" else []
        said.extend(_attribute_renamed(tool_names, attributes, at))
        if said:
            message = f"tool {tool_names[at]!r} gets " + ", and ".join(said)
            session.diagnostics.append(
                raw.document.diagnostic(raw.where("name"), "name-collision", message, Severity.WARNING)
            )
        input_pointer = raw.where("inputSchema")
        input_schema = session.prepare(raw.document, input_pointer, raw.value("inputSchema"))
        bundler.add_root(args, Resource(raw.document, input_pointer), input_pointer, input_schema)
        if returns:
            output_pointer = raw.where("outputSchema")
            output_schema = session.prepare(raw.document, output_pointer, raw.value("outputSchema"))
            bundler.add_root(returns, Resource(raw.document, output_pointer), output_pointer, output_schema)
        result.append((raw, stem, args, returns, input_schema))
    return result


def _attribute_renamed(names: list[str], attributes: list[str], at: int) -> list[str]:
    """Why tool `at` has another registry attribute than its name makes (`tools.<name in snake_case>`), or what
    it has when its name is an identifier other than that: the attribute its users must write instead."""
    name, attribute = names[at], attributes[at]
    plain = snake(name, fallback="tool")
    if attribute != plain:
        if plain in REGISTRY_MEMBERS:
            return [f"the attribute tools.{attribute} because tools.{plain} is the registry's own"]
        owner = names[attributes.index(plain)]
        return [f"the attribute tools.{attribute} because tool {owner!r} has tools.{plain}"]
    # A name written as an identifier in lower case is what its users would write: say when it is not.
    if attribute != name and name.isidentifier() and name == name.lower():
        reason = "an attribute is snake_case words, never a Python keyword or a name starting with `_`"
        return [f"the attribute tools.{attribute} because {reason}"]
    return []


@dataclass(frozen=True)
class Lowered:
    project: Project
    warnings: tuple[Diagnostic, ...]
    inputs: dict[str, str]  # display path -> text digest of every file read
    # Each tool as written with its checked input schema, for rules that report positions (lint).
    sources: tuple[tuple[shapes.RawTool, Any], ...] = ()


def lower(config: Config, *, check_shapes: bool = True) -> Lowered:
    """Build the IR, or raise InvalidInputError carrying every error found (warnings are returned).

    `check_shapes=False` leaves out the checks against the meta-schemas (each tool's shape, each schema against
    its draft), which report only errors: for inputs a build has checked, unchanged since under the same toolgen
    (recorded.recorded_project).
    """
    session = _Session(config, check_shapes=check_shapes)
    names = NameRegistry(RESERVED_NAMES)
    remotes = {prefix: (config.root / folder, folder) for prefix, folder in config.remotes}
    normalize = (lambda schema: normalize_types(schema, lambda *_: None)) if "types" in config.normalize else None
    bundler = Bundler(names, session.load, session.prepare, remotes, normalize, scope=config.ref_scope)
    session.meta_schema = bundler.document
    canonical = _canonical(session, bundler, names)
    tools = _tools(session, bundler, names)
    bundler.run()
    _extend_messages(session, bundler)
    bundler.run()
    session.diagnostics.extend(bundler.diagnostics)
    defs = bundler.defs
    inputs = {args: standalone(defs, args) for _, _, args, _, _ in tools}
    written = {args: written_check(bundler, schema, inputs[args]) for _, _, args, _, schema in tools}
    roots = {
        **dict.fromkeys(canonical, MODELS),
        **{args: BUNDLED if written[args] is None else AS_WRITTEN for args in written},
        **{returns: BUNDLED for _, _, _, returns, _ in tools if returns},
    }
    session.diagnostics.extend(unfollowed_in_bundle(bundler, roots, frozenset(canonical)))
    session.diagnostics.extend(too_deep(defs, [name for name in roots if name not in canonical], bundler.origins))
    if has_errors(session.diagnostics):
        raise InvalidInputError(session.diagnostics)
    # A tool checked as written may hold `$dynamicRef`s, which its bundled schema cannot follow as they stand.
    reported = len(bundler.diagnostics)
    as_written = [(args, raw.value("name"), inputs[args]) for raw, _, args, _, _ in tools if written[args] is not None]
    exported, problems = exported_inputs(bundler, as_written)
    session.diagnostics.extend([*bundler.diagnostics[reported:], *problems])
    if has_errors(session.diagnostics):
        raise InvalidInputError(session.diagnostics)
    tool_irs = []
    for raw, stem, args, returns, _ in tools:
        # Each exported schema keeps its author's `$defs` keys, whatever names the other tools' schemas took.
        sent = _sent(session, bundler, raw, args, "input") if args not in exported else exported[args]
        result = _sent(session, bundler, raw, returns, "output") if returns else None
        tool_irs.append(_tool(raw, stem, args, returns, inputs[args], sent, result, written[args], config))
    session.diagnostics.extend(_describe_meta_problems(config, [raw for raw, *_ in tools]))
    unions = infer_unions(defs)
    # Canonical models are checked by their models alone, so only tool schemas are relaxed (see fidelity.py).
    relaxed = {name: schema if name in canonical else relax_for_models(schema) for name, schema in defs.items()}
    model_defs = assign_class_names(strip_annotations_for_models(relaxed), names, frozenset(canonical))
    pinned, lock_inputs = build_lock(config)  # the MCP lock is an input too: `check` sees it change
    project = Project(
        package=config.package,
        models_schema=json.dumps({"$defs": model_defs, "title": ROOT_MODEL}, ensure_ascii=False),
        canonical_models=tuple(canonical),
        unions=tuple(unions),
        tools=tuple(tool_irs),
        mcp_lock=pinned,
        mcp_on_drift=config.mcp_on_drift,
        version=config.package_version,
    )
    warnings = tuple(d for d in session.diagnostics if d.severity is Severity.WARNING)
    inputs_read = recorded_digests(session.documents.values(), warnings) | lock_inputs
    sources = tuple((raw, input_schema) for raw, _, _, _, input_schema in tools)
    return Lowered(project, warnings, inputs_read, sources)


def _tool(
    raw: shapes.RawTool,
    stem: str,
    args: str,
    returns: str | None,
    input_schema: Any,
    exported: Any,
    output_schema: Any,
    written: tuple[Any, dict[str, Any]] | None,
    config: Config,
) -> Tool:
    """The tool's IR; `exported` is its input schema as sent to providers, `input_schema` the bundled one the models
    and checks read, and `output_schema` the output schema as sent (export_keys.py, dynamic_refs.py)."""
    check = not models_are_exact(input_schema)
    as_written = written if check else None
    return Tool(
        name=raw.value("name"),
        stem=stem,
        args_model=args,
        result_model=returns,
        title=raw.value("title"),
        description=raw.value("description"),
        input_schema=freeze(_declared(raw, "inputSchema", exported)),
        output_schema=freeze(_declared(raw, "outputSchema", output_schema)) if returns else None,
        return_direct=bool(raw.value("returnDirect", False)),
        timeout=raw.value("timeout"),
        requires_approval=bool(raw.value("requiresApproval", False)),
        strict=raw.value("strict"),
        meta=freeze(raw.value("meta", {})),
        annotations=freeze(raw.value("annotations", {})),
        source=raw.document.display,
        null_as_absent=raw.value("strict") is True or config.export_strict,
        check_input=check,
        check_schema=freeze(as_written[0]) if as_written else None,
        check_resources=freeze(dict(sorted(as_written[1].items()))) if as_written and as_written[1] else None,
        check_output=(check_output := returns is not None and not models_are_exact(output_schema)),
        dialects=_dialects(raw, check and not as_written, check_output),
        describe_meta=_describe_meta(raw, config),
    )


def _sent(session: _Session, bundler: Bundler, raw: shapes.RawTool, root: str, which: str) -> Any:
    """The standalone schema of bundled `root` as providers are sent it: under its author's `$defs` keys."""
    schema, renamed = own_keys(standalone(bundler.defs, root), root, raw.value("name"), which, bundler.origins)
    session.diagnostics.extend(renamed)
    return schema


def _declared(raw: shapes.RawTool, key: str, bundled: Any) -> Any:
    """The bundled schema with the `$schema` the tool wrote at its top: bundling drops it, and the built TOOLS, the
    MCP export and the JSON Schema check read the draft there (an exporter whose provider refuses it drops it)."""
    written = raw.value(key)
    declared = written.get("$schema") if isinstance(written, dict) else None
    if not isinstance(declared, str) or not isinstance(bundled, dict):
        return bundled
    return {"$schema": declared, **bundled}


def _describe_meta(raw: shapes.RawTool, config: Config) -> str | None:
    """The tool's describeMeta, else the project's describe_meta, as JSON; None when it folds no key."""
    chosen = raw.value("describeMeta")
    if chosen is None:
        chosen = list(config.describe_meta) if isinstance(config.describe_meta, tuple) else config.describe_meta
    return freeze(chosen) if chosen else None


def _describe_meta_problems(config: Config, raws: list[shapes.RawTool]) -> Iterator[Diagnostic]:
    """A key describeMeta lists that the tool's meta lacks (a typo folds nothing): a warning where it is listed;
    for toolgen.yaml's list, a key no tool's meta has."""
    seen: set[str] = set()
    for raw in raws:
        meta = raw.value("meta") or {}
        seen.update(meta)
        chosen = raw.value("describeMeta")
        for index, key in enumerate(chosen if isinstance(chosen, list) else []):
            if key not in meta:
                yield raw.document.diagnostic(
                    (*raw.where("describeMeta"), str(index)),
                    "describe-meta-key",
                    f"describeMeta lists {key!r}, which this tool's meta does not have; it folds nothing",
                    Severity.WARNING,
                )
    project = config.describe_meta if isinstance(config.describe_meta, tuple) else ()
    for key in project:
        if raws and key not in seen:
            line, col = config.describe_meta_position
            problem = f"describe_meta lists {key!r}, which no tool's meta has; it folds nothing"
            yield Diagnostic(
                config.display, line, col, Severity.WARNING, "describe-meta-key", problem, "/describe_meta"
            )


_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _dialects(raw: shapes.RawTool, input_bundled: bool, output_checked: bool) -> str | None:
    """The drafts the bundled schemas' checks read them as, where the tool declares one other than 2020-12."""
    found = {}
    for which, key, checked in (("input", "inputSchema", input_bundled), ("output", "outputSchema", output_checked)):
        declared = raw.value(key, {}).get("$schema") if isinstance(raw.value(key, {}), dict) else None
        if checked and isinstance(declared, str) and declared.rstrip("#") != _DRAFT_2020_12:
            found[which] = declared
    return freeze(found) if found else None
