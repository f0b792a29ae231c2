"""toolgen's MCP client against the reference servers no toolgen code wrote: server-everything over streamable HTTP,
server-filesystem (roots, media, refusals) and mcp-server-git, through connect/import/build and a run of the loop."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.cli_in_process import Ran, toolgen_in
from support.mcp_helpers import DEADLINE, free_port, wait_listening
from support.mcp_peers import peer_command

from toolgen.runtime import (
    Registry,
    RunOptions,
    ScriptedModel,
    assistant_turn,
    connect_mcp,
    mcp_tools,
    run_events,
    tool_call,
)

# A 1x1 PNG: what read_media_file sends back as an image block.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@contextmanager
def everything_over_http() -> Iterator[str]:
    """server-everything's streamable HTTP transport on a free port: its /mcp URL."""
    port = free_port()
    process = subprocess.Popen(
        peer_command("everything", "streamableHttp"),
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(process, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _events(registry: Registry, calls: list[Any]) -> list[Any]:
    model = ScriptedModel([assistant_turn(None, *calls), "Done."])
    return list(run_events([{"role": "user", "content": "go"}], model, registry, RunOptions(stream=False)))


def test_server_everything_over_streamable_http_lists_calls_and_sends_images_and_progress() -> None:
    with everything_over_http() as url:
        registry = Registry({})
        with mcp_tools(registry, url, names=["echo", "get-tiny-image", "trigger-long-running-operation"]) as server:
            assert {d["name"] for d in server.definitions} >= {"echo", "get-tiny-image"}
            # Its annotations arrive as the tool's own.
            echo = next(d for d in server.definitions if d["name"] == "echo")
            assert set(echo.get("annotations") or {}) >= {"readOnlyHint", "destructiveHint"}
            events = _events(
                registry,
                [
                    tool_call("echo", {"message": "over http"}, id="c1"),
                    tool_call("get-tiny-image", {}, id="c2"),
                    tool_call("trigger-long-running-operation", {"duration": 1, "steps": 3}, id="c3"),
                ],
            )
    finished = {e.data["id"]: e.data for e in events if e.type == "tool_call_finished"}
    assert set(finished) == {"c1", "c2", "c3"}, [e.type for e in events]
    assert {d["status"] for d in finished.values()} == {"ok"}, finished
    assert "over http" in str(finished["c1"]["content"])
    # The image is an image part of the tool's answer, not its base64 as text.
    image = finished["c2"]["content"]
    assert isinstance(image, list) and any(p.get("type") == "image" for p in image), image
    progress = [e.data for e in events if e.type == "tool_call_progress" and e.data["id"] == "c3"]
    assert progress, "server-everything's long running operation reported no progress"
    assert progress[-1]["total"] == 3


def test_server_filesystem_reads_within_its_roots_refuses_outside_and_sends_media(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "notes.txt").write_text("hello from inside\n", encoding="utf-8")
    (inside / "dot.png").write_bytes(PNG)
    (outside / "secret.txt").write_text("not for the model\n", encoding="utf-8")
    # No directory on the command line: the server asks the client for its roots, which toolgen now offers.
    with connect_mcp(peer_command("filesystem"), roots=[str(inside)], timeout=DEADLINE) as server:
        names = {d["name"] for d in server.definitions}
        assert {"read_text_file", "read_media_file", "list_directory"} <= names
        read = next(d for d in server.definitions if d["name"] == "read_text_file")
        assert read["annotations"]["readOnlyHint"] is True
        assert "hello from inside" in str(server.call("read_text_file", {"path": str(inside / "notes.txt")}))
        registry = Registry({})
        server.add_to(registry, names=["read_text_file", "read_media_file"])
        events = _events(
            registry,
            [
                tool_call("read_text_file", {"path": str(outside / "secret.txt")}, id="out"),
                tool_call("read_media_file", {"path": str(inside / "dot.png")}, id="img"),
            ],
        )
    finished = {e.data["id"]: e.data for e in events if e.type == "tool_call_finished"}
    refused = finished["out"]
    assert refused["status"] == "error", refused
    said = str(refused["content"])
    assert "not for the model" not in said and "outside allowed directories" in said, said
    assert said.count("Error") <= 1, said  # the server's own words, said once
    image = finished["img"]
    assert image["status"] == "ok" and isinstance(image["content"], list), image
    assert any(p.get("type") == "image" for p in image["content"]), image


def _repository(path: Path) -> Path:
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.email=dev@example.org", "-c", "user.name=Dev"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "README.md").write_text("# a project\n", encoding="utf-8")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "The first commit"], check=True)
    return path


def test_mcp_server_git_runs_its_tools_through_the_loop(tmp_path: Path) -> None:
    repository = _repository(tmp_path / "repo")
    (repository / "README.md").write_text("# a project, changed\n", encoding="utf-8")
    registry = Registry({})
    with mcp_tools(registry, peer_command("git", "--repository", str(repository)), names=["git_log", "git_status"]):
        events = _events(
            registry,
            [
                tool_call("git_log", {"repo_path": str(repository)}, id="log"),
                tool_call("git_status", {"repo_path": str(repository)}, id="status"),
                tool_call("git_log", {"repo_path": str(repository), "max_count": "many"}, id="bad"),
            ],
        )
    finished = {e.data["id"]: e.data for e in events if e.type == "tool_call_finished"}
    assert finished["log"]["status"] == "ok" and "The first commit" in str(finished["log"]["content"])
    assert "README.md" in str(finished["status"]["content"])
    # Arguments its input schema refuses are the model's to hear, checked before the server sees them.
    assert (finished["bad"]["status"], finished["bad"]["error_kind"]) == ("error", "invalid_arguments")


def toolgen_cli(*args: str, cwd: Path) -> Ran:
    """`toolgen ARGS` in this process (click's runner): its exit code and output, as a process would give them."""
    return toolgen_in(cwd, *args)


def test_importing_server_filesystem_builds_a_package_with_its_annotations_and_a_lock(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    assert toolgen_cli("init", cwd=project).returncode == 0
    imported = toolgen_cli("import", "mcp", "--", *peer_command("filesystem", str(allowed)), cwd=project)
    assert imported.returncode == 0, imported.stderr
    written = project / "schemas" / "tools"
    assert (written / "read_text_file.yaml").exists()
    assert "readOnlyHint: true" in (written / "read_text_file.yaml").read_text(encoding="utf-8")
    assert (written / "mcp-lock.json").exists()
    built = toolgen_cli("build", cwd=project)
    assert built.returncode == 0, built.stderr
    checked = toolgen_cli("import", "mcp", "--check", "--", *peer_command("filesystem", str(allowed)), cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr
