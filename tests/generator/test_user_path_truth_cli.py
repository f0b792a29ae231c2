"""What the command line and toolgen's functions say on a user's path: an option that changes nothing refused, one
path given as a str taken as one path, a hand edit a build replaces named, an empty `output:` refused at the key,
the verbs that never write not saying that nothing was written, and every refused argument carrying an exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_in_process import toolgen_in
from support.projects import Project

import toolgen
from toolgen import api

CONVERSATION = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Sunny."}]

# --- export --gemini-schema with a format that is not Gemini's ---------------------------------------------------


def test_gemini_schema_with_another_format_is_a_usage_error(project: Project) -> None:
    refused = toolgen_in(project.root, "export", "--format", "anthropic", "--gemini-schema", "openapi")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.endswith(
        "Error: --gemini-schema chooses Gemini's schema field: it applies to --format gemini or google, and "
        "anthropic has no such field\n"
    )
    assert toolgen_in(project.root, "export", "--format", "mcp", "--gemini-schema", "json").returncode == 2
    assert toolgen_in(project.root, "export", "--format", "gemini", "--gemini-schema", "openapi").returncode == 0
    with pytest.raises(api.ArgumentError) as error:
        api.export(project.root, provider="anthropic", gemini="openapi")
    assert error.value.exit_code == toolgen.ExitCode.USAGE
    assert api.export(project.root, provider="anthropic")[0].provider == "anthropic"


# --- one path as a str or a Path ---------------------------------------------------------------------------------


def test_validate_takes_one_str_or_path_as_one_path(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)  # relative paths are the caller's, as on the command line
    project.write("recordings/chat.json", json.dumps(CONVERSATION))
    project.write("recordings/bad.json", json.dumps([{"role": "tool", "content": "18 C"}]))
    as_list = list(api.validate(["recordings"], kind="messages", root=project.root))
    assert [finding.path for finding in as_list] == ["recordings/bad.json"]
    for one in ("recordings", Path("recordings"), str(project.root / "recordings")):
        tally = api.Tally()
        assert list(api.validate(one, kind="messages", root=project.root, tally=tally)) == as_list, one
        assert tally.records == 2
    assert [source.display for source in api.payload_sources("recordings", root=project.root)] == [
        "recordings/bad.json",
        "recordings/chat.json",
    ]


def test_conformance_takes_one_str_as_one_folder(project: Project, tmp_path: Path) -> None:
    folder = tmp_path / "payloads"
    folder.mkdir()
    assert api.conformance(str(folder)) == api.conformance([folder]) == []


# --- a hand edit a build replaces --------------------------------------------------------------------------------


def test_a_build_names_the_generated_file_whose_hand_edit_it_replaced(project: Project) -> None:
    tools = project.package_dir / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "MY_CONSTANT = 42  # my edit\n", encoding="utf-8")
    result = project.cli("build", "-q")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "toolgen: note: generated/sdk/tools.py was edited by hand since the last build; the build replaced the edit "
        "(code of your own goes in generated/sdk/ext/ or a path under `keep:`, which builds never touch)",
        "toolgen: wrote generated/sdk/: 1 file changed, 219 unchanged",
    ]
    assert "MY_CONSTANT" not in tools.read_text(encoding="utf-8")
    again = project.cli("build", "-q", "--force")
    assert "edited by hand" not in again.stderr, "a file as its build wrote it is no edit"
    tools.write_text(tools.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    assert api.build(project.root).edited == ("tools.py",)


# --- output: '' --------------------------------------------------------------------------------------------------


def test_an_empty_output_is_a_config_error_at_the_key(project: Project) -> None:
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("output: generated", "output: ''"), "utf-8")
    result = project.cli("build")
    assert result.returncode == 3
    assert result.stdout == (
        "toolgen.yaml:3:9: error config-output output '' is empty; name the folder for the generated package "
        "(`generated`, or `.` for the project root itself)\n"
    )
    assert not (project.root / "sdk").exists()


# --- wording -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "verb",
    [("check",), ("lint",), ("validate", "recordings", "--as", "messages"), ("breaking", "--against", "HEAD")],
    ids=lambda verb: verb[0],
)
def test_a_verb_that_never_writes_does_not_say_nothing_was_written(project: Project, verb: tuple[str, ...]) -> None:
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "bogus: 1\n", encoding="utf-8")
    result = project.cli(*verb)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.splitlines()[-1] == "toolgen: 1 error in the input"
    assert project.cli("build").stderr.splitlines()[-1] == "toolgen: 1 error in the input; nothing was written"


def test_a_file_given_as_the_project_folder_is_said_to_be_a_file(project: Project) -> None:
    config = project.root / "toolgen.yaml"
    with pytest.raises(toolgen.ToolgenError) as error:
        api.build(config)
    assert error.value.exit_code == toolgen.ExitCode.INVALID_INPUT
    assert str(error.value) == (
        f"{config} is a file: give the project folder, the one holding toolgen.yaml ({project.root}), or name the "
        "file with --config (config_path=)"
    )


def test_a_refused_provider_or_kind_carries_an_exit_code(project: Project) -> None:
    with pytest.raises(api.ArgumentError) as provider:
        api.lint(project.root, providers=("opnai",))
    assert provider.value.exit_code == toolgen.ExitCode.USAGE and isinstance(provider.value, ValueError)
    assert str(provider.value).startswith("unknown provider 'opnai' (did you mean 'openai'?); one of anthropic, ")
    with pytest.raises(api.ArgumentError) as kind:
        list(api.validate(["recordings"], kind="bogus", root=project.root))
    assert kind.value.exit_code == toolgen.ExitCode.USAGE
    assert str(kind.value).startswith("unknown payload kind 'bogus'; one of message, messages, ")
    assert api.lint(project.root, providers="anthropic") == api.lint(project.root, providers=("anthropic",))
