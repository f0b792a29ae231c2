"""`toolgen validate` of gzip-compressed logs (`.jsonl.gz`, `.json.gz`, recorded streams): the findings of the
same file uncompressed, placed the same; a cut or corrupt archive is an unreadable file, and the others go on."""

from __future__ import annotations

import gzip
import importlib
import json
from pathlib import Path

import pytest
from support.projects import Project
from test_validate import RECORDS

import toolgen
from toolgen.payloads.validation.local import Tally

validate_stage = importlib.import_module("toolgen.payloads.validation.local")


def _both(project: Project, name: str, text: str) -> tuple[Path, Path]:
    plain = project.write(f"logs/{name}", text)
    packed = project.root / "packed" / f"{name}.gz"
    packed.parent.mkdir(exist_ok=True)
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    return plain, packed


def _findings(project: Project, path: Path, kind: str = "message") -> tuple[list[tuple[int, int, str, str]], Tally]:
    tally = Tally()
    found = toolgen.validate([path], kind=kind, root=project.root, tally=tally)
    return [(d.line, d.col, d.rule, d.message) for d in found], tally


def test_a_compressed_log_has_the_findings_of_the_plain_one(project: Project) -> None:
    plain, packed = _both(project, "chat.jsonl", "\n".join(RECORDS).replace("\n", "\r\n") + "\r\n")
    expected = _findings(project, plain)
    assert expected[0] and _findings(project, packed) == expected
    document = '[\n  {"role": "user",\n   "content": 7}\n]\n'
    plain, packed = _both(project, "conversation.json", document)
    assert _findings(project, packed, "messages") == _findings(project, plain, "messages")


def test_a_folder_lists_compressed_logs_and_the_command_names_them(project: Project) -> None:
    _both(project, "chat.jsonl", "\n".join(RECORDS) + "\n")
    result = project.cli("validate", "packed", "--as", "message", "--format", "json")
    assert result.returncode == 1, result.stderr
    assert {finding["path"] for finding in json.loads(result.stdout)} == {"packed/chat.jsonl.gz"}
    assert "7 record(s), 4 invalid, 0 unreadable" in result.stderr


def test_large_compressed_logs_are_checked_on_every_core_in_order(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, packed = _both(project, "big.jsonl", "\n".join(RECORDS * 300) + "\n")
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 1000)
    monkeypatch.setattr(validate_stage, "BLOCK_BYTES", 4096)
    parallel = list(toolgen.validate([packed], kind="message", root=project.root, workers=2))
    monkeypatch.setattr(validate_stage, "PARALLEL_THRESHOLD", 10**12)
    serial = list(toolgen.validate([packed], kind="message", root=project.root, workers=1))
    assert parallel == serial and len(serial) == 4 * 300


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="cut-short"),
        pytest.param(lambda data: data[:20] + bytes(b ^ 0x5A for b in data[20:60]) + data[60:], id="corrupt"),
        pytest.param(lambda data: b"not gzip at all", id="not-gzip"),
    ],
)
def test_a_damaged_archive_is_an_unreadable_file_and_the_next_is_still_checked(
    project: Project, damage: object
) -> None:
    _, packed = _both(project, "chat.jsonl", "\n".join(RECORDS * 50) + "\n")
    packed.write_bytes(damage(packed.read_bytes()))  # type: ignore[operator]
    _, good = _both(project, "z.jsonl", RECORDS[5] + "\n")
    result = project.cli("validate", str(packed), str(good), "--as", "message", "--format", "json")
    assert result.returncode == 3, result.stderr
    found = json.loads(result.stdout)
    unreadable = [f for f in found if f["rule"] == "file-unreadable"]
    assert [f["path"] for f in unreadable] == ["packed/chat.jsonl.gz"], found
    assert found[-1]["path"] == "packed/z.jsonl.gz" and found[-1]["rule"] == "payload-invalid"
    assert "Traceback" not in result.stderr


def test_a_cluster_refuses_a_compressed_file_by_name(project: Project) -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    from toolgen.payloads.validation.cluster import _local_target

    _, packed = _both(project, "chat.jsonl", RECORDS[0] + "\n")
    target = _local_target(packed, "packed/chat.jsonl.gz")
    assert target.error is not None and "without --dask" in target.error
