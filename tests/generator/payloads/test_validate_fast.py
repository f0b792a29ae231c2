"""`toolgen validate` with the plain validators it keeps: the same findings as the models, never a yes they would not give.

The first run checks with the models and keeps each target's plain form in the project's cache; later runs
accept with the plain validators what they can and hand everything else to the models. These tests hold the
two runs' output equal on valid and invalid records, show that the cache is not read for a package or a
config that changed, and compare the plain validators with the models on random schemas and values.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import TESTS, Project
from support.schema_cases import input_schemas, values
from test_validator_agreement import Built, _built

from toolgen.payloads.plain_schemas import plain_schema
from toolgen.runtime import ToolgenValidationError, decode

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
}
RECORDS = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "user", "content": 5},  # invalid: content
    {"role": "user", "content": "hi", "extra": 1},  # invalid: an unknown key
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{**CALL, "function": {**CALL["function"], "arguments": "{}"}}],
    },
    {"role": "assistant", "content": None, "tool_calls": [{**CALL, "function": {"name": "nope", "arguments": "{}"}}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{**CALL, "function": {**CALL["function"], "arguments": "{"}}],
    },
    {"role": "assistant", "content": None, "tool_calls": [{**CALL, "function": {**CALL["function"], "arguments": ""}}]},
]


def _validate(project: Project, path: Path, *args: str) -> tuple[int, Any]:
    done = project.cli("validate", "--format", "json", *args, str(path))
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _kept(project: Project) -> list[Path]:
    folder = project.root / ".toolgen-cache" / "validate"
    return sorted(folder.rglob("*.json")) if folder.is_dir() else []


def test_a_second_run_gives_the_first_runs_findings(project: Project) -> None:
    path = project.root / "messages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    first = _validate(project, path, "--as", "message")
    assert _kept(project), "the first run keeps the plain validators it could make"
    second = _validate(project, path, "--as", "message")
    assert second == first
    assert first[0] == 1
    lines = sorted({finding["line"] for finding in first[1]})
    assert lines == [4, 5, 6, 7, 8, 9], first[1]  # blank arguments are a call without any: `location` is missing


def test_records_the_plain_validators_accept_are_checked_without_the_package(project: Project) -> None:
    path = project.root / "valid.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:3]), encoding="utf-8")
    assert _validate(project, path, "--as", "message") == (0, [])
    code = textwrap.dedent(
        f"""
        import json, sys
        from toolgen import api
        found = list(api.validate([{str(path)!r}], kind="message", root={str(project.root)!r}))
        print(json.dumps({{"found": len(found), "models": "sdk.models" in sys.modules, "yaml": "yaml" in sys.modules}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"found": 0, "models": False, "yaml": False}


def test_pairing_problems_of_messages_still_come_from_the_models(project: Project) -> None:
    path = project.root / "conversation.json"
    path.write_text(json.dumps(RECORDS[:2]), encoding="utf-8")  # a call no result answers
    first = _validate(project, path, "--as", "messages")
    second = _validate(project, path, "--as", "messages")
    assert first == second and first[0] == 1
    assert [f["rule"] for f in first[1]] == ["pairing-invalid"]
    path.write_text(json.dumps(RECORDS[:3]), encoding="utf-8")
    assert _validate(project, path, "--as", "messages") == (0, [])
    assert _validate(project, path, "--as", "messages") == (0, [])


def test_a_rebuilt_package_is_not_judged_by_the_old_cache(project: Project) -> None:
    path = project.root / "call.json"
    path.write_text(json.dumps(RECORDS[1]), encoding="utf-8")
    assert _validate(project, path, "--as", "message") == (0, [])
    assert _validate(project, path, "--as", "message") == (0, [])  # from the cache
    schema = (project.root / "schemas" / "weather.yaml").read_text(encoding="utf-8")
    project.write("schemas/weather.yaml", schema.replace("location: {type: string}", "location: {type: integer}"))
    assert project.cli("build").returncode == 0
    code, found = _validate(project, path, "--as", "message")
    assert code == 1 and [f["rule"] for f in found] == ["arguments-invalid"], found


def test_a_cache_that_does_not_read_is_no_cache(project: Project) -> None:
    path = project.root / "valid.json"
    path.write_text(json.dumps(RECORDS[3]), encoding="utf-8")
    first = _validate(project, path, "--as", "message")
    for kept in _kept(project):
        kept.write_text("{not json", encoding="utf-8")
    assert _validate(project, path, "--as", "message") == first
    (project.root / ".toolgen-cache" / "config.json").write_text("[]", encoding="utf-8")
    assert _validate(project, path, "--as", "message") == first


def test_an_edited_config_is_read_again(project: Project) -> None:
    path = project.root / "valid.json"
    path.write_text(json.dumps(RECORDS[0]), encoding="utf-8")
    assert _validate(project, path, "--as", "message") == (0, [])
    assert (project.root / ".toolgen-cache" / "config.json").is_file()
    config = (project.root / "toolgen.yaml").read_text(encoding="utf-8")
    (project.root / "toolgen.yaml").write_text(config.replace("package: sdk", "package: other_sdk"), encoding="utf-8")
    done = project.cli("validate", "--as", "message", str(path))
    assert done.returncode == 3 and "other_sdk" in done.stderr, done.stderr  # not built under that name yet
    assert project.cli("build").returncode == 0
    assert _validate(project, path, "--as", "message") == (0, [])


def test_a_config_cache_naming_other_settings_is_not_believed(project: Project) -> None:
    path = project.root / "valid.json"
    path.write_text(json.dumps(RECORDS[0]), encoding="utf-8")
    assert _validate(project, path, "--as", "message") == (0, [])
    kept = project.root / ".toolgen-cache" / "config.json"
    stored = json.loads(kept.read_text(encoding="utf-8"))
    stored["settings"]["package"] = "elsewhere"
    kept.write_text(json.dumps(stored), encoding="utf-8")
    assert _validate(project, path, "--as", "message") == (0, [])


def _fresh_validate(project: Project, path: Path) -> dict[str, Any]:
    """validate in a fresh process of a checkout without `.toolgen-cache/`: its findings, and whether it read
    the config with a YAML parser."""
    import shutil

    shutil.rmtree(project.root / ".toolgen-cache", ignore_errors=True)
    code = (
        "import json, sys\n"
        "from toolgen import api\n"
        f"found = list(api.validate([{str(path)!r}], kind='message', root={str(project.root)!r}))\n"
        "print(json.dumps({'found': [d.rule for d in found], 'yaml': 'yaml' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_fresh_checkout_reads_a_plain_config_without_yaml(project: Project) -> None:
    path = project.root / "records.jsonl"
    # Valid records: placing a finding in its file loads the positions module, YAML's half with it.
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:3]), encoding="utf-8")
    assert _fresh_validate(project, path) == {"found": [], "yaml": False}
    assert (project.root / ".toolgen-cache" / "config.json").is_file(), "the manifest vouched for the plain read"
    assert _validate(project, path, "--as", "message") == (0, [])


def test_a_config_beyond_the_plain_subset_is_read_with_yaml(project: Project) -> None:
    config = (project.root / "toolgen.yaml").read_text(encoding="utf-8")
    (project.root / "toolgen.yaml").write_text(config.replace("package: sdk", "package: &name sdk"), encoding="utf-8")
    assert project.cli("build").returncode == 0
    path = project.root / "valid.json"
    path.write_text(json.dumps(RECORDS[4]), encoding="utf-8")
    assert _fresh_validate(project, path) == {"found": ["payload-invalid"], "yaml": True}


# -- the plain validators against the models, on canonical messages and random schemas and values ---------------------------------


FIXTURES = TESTS / "fixtures" / "payloads"
ODD_VALUES: tuple[Any, ...] = (None, 5, 1.5, "x", "", [], {}, [None], True)


def _fixture_messages() -> list[Any]:
    """The canonical messages of every request and response fixture, decoded from its wire."""
    found: list[Any] = []
    for path in sorted(FIXTURES.glob("*/*/*.json")):
        wire, kind = path.parent.parent.name, path.parent.name
        try:
            decoded = decode(json.loads(path.read_text(encoding="utf-8")), wire, kind)
        except ValueError:
            continue  # a fixture of a body the wire refuses: not a message
        messages = getattr(decoded, "messages", None)
        found.extend(messages if messages is not None else [getattr(decoded, "message", None)])
    return [m for m in found if isinstance(m, dict)]


def _variants(value: Any) -> Iterator[Any]:
    """`value`, and each way of breaking it one key or item at a time, all the way down."""
    yield value
    if isinstance(value, dict):
        for key, item in value.items():
            yield {k: v for k, v in value.items() if k != key}
            for odd in ODD_VALUES:
                yield {**value, key: odd}
            for inner in _variants(item):
                yield {**value, key: inner}
        yield {**value, "unexpected": 1}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for inner in _variants(item):
                yield [*value[:index], inner, *value[index + 1 :]]


def test_plain_message_validators_agree_with_the_models(source_package: Any) -> None:
    from pydantic import TypeAdapter

    validators = source_package.validators
    adapter = validators._MESSAGE
    assert isinstance(adapter, TypeAdapter)
    text = plain_schema(adapter.core_schema)
    assert text is not None, "the canonical message has a plain form"
    fast = pydantic_core.SchemaValidator(json.loads(text))
    messages = _fixture_messages()
    assert len(messages) > 50
    checked = 0
    for message in messages:
        assert _accepts(fast, message), f"a decoded fixture message the plain validator refuses: {message}"
        for variant in _variants(message):
            checked += 1
            if _accepts(fast, variant):
                try:
                    source_package.validate_message(variant)
                except ToolgenValidationError as error:
                    pytest.fail(f"plain accepts {variant!r}, the models say {error}")
    assert checked > 1000


def _plain_validators(built: Built) -> dict[int, pydantic_core.SchemaValidator]:
    found = {}
    for index in range(len(built.schemas)):
        spec = built.sdk.TOOLS[f"t{index}"]
        if spec.check_input:
            continue  # the fast path never decides these: a JSON Schema check runs beside the models
        text = plain_schema(_core_schema(spec.args_model))
        if text is not None:
            found[index] = pydantic_core.SchemaValidator(json.loads(text))
    return found


def _core_schema(model: Any) -> Any:
    if not isinstance(model.__pydantic_core_schema__, dict):
        model.model_rebuild()  # a deferred model has a stand-in until it is first built
    return model.__pydantic_core_schema__


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Built, dict[int, Any]]]:
    with _built(tmp_path_factory.mktemp("plain"), "plain_sdk", input_schemas(23, 120)) as built:
        yield built, _plain_validators(built)


def test_most_argument_models_have_a_plain_form(plain: tuple[Built, dict[int, Any]]) -> None:
    built, validators = plain
    plain_able = [i for i in range(len(built.schemas)) if not built.sdk.TOOLS[f"t{i}"].check_input]
    assert len(validators) >= len(plain_able) // 2, f"{len(validators)} of {len(plain_able)}"


def _accepts(validator: Any, value: Any) -> bool:
    try:
        validator.validate_python(value, strict=True)
    except pydantic_core.ValidationError:
        return False
    return True


@settings(
    max_examples=800,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_the_plain_validators_never_accept_what_the_models_refuse(
    plain: tuple[Built, dict[int, Any]], data: st.DataObject
) -> None:
    built, validators = plain
    index = data.draw(st.sampled_from(sorted(validators)))
    value = data.draw(values(built.schemas[index], built.schemas[index]))
    if _accepts(validators[index], value):
        try:
            built.sdk.TOOLS[f"t{index}"].check_arguments(value, json_text=False)
        except ToolgenValidationError as error:
            schema = json.dumps(built.schemas[index])
            pytest.fail(f"plain accepts {value!r} for {schema}, the models say {error}")
