"""What runs on a Dask worker for `toolgen validate --dask`: the generated SDK unpacked and imported once per worker
(a worker plugin, so a worker that joins or restarts mid-run gets it too), and the task that checks one block.

Imported only where dask.distributed is installed.
"""

from __future__ import annotations

import importlib.metadata
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import fsspec
from distributed import WorkerPlugin, get_worker
from fsspec.utils import read_block

from toolgen.payloads.files import BOM
from toolgen.payloads.validation.blocks import BlockResult, check_document, check_lines, check_stream
from toolgen.payloads.validation.local import load_sdk


def toolgen_version() -> str:
    """The installed toolgen's version, which client and workers must share."""
    return importlib.metadata.version("toolgen")


class SdkPlugin(WorkerPlugin):
    """The generated package's files, written under the worker's own directory and imported there at setup."""

    def __init__(self, name: str, package: str, files: tuple[tuple[str, bytes], ...], version: str) -> None:
        self.name = name
        self.package = package
        self.files = files
        self.version = version
        self.folder: Path | None = None
        self.sdk: ModuleType | None = None

    def setup(self, worker: Any) -> None:
        here = toolgen_version()
        if here != self.version:
            # Another toolgen may check records differently: the run would not match a local one.
            raise RuntimeError(f"this worker has toolgen {here}, the client {self.version}; install the same on both")
        folder = Path(worker.local_directory) / self.name
        for relative, data in self.files:
            target = folder / self.package / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self.folder = folder
        self.sdk = load_sdk(folder, self.package)

    def teardown(self, worker: Any) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class Block:
    """One task: a byte range of a file (whole lines), or the whole file for a `.json` document.

    `data` holds the bytes when the client read them (a filesystem only it can see, such as memory://); otherwise
    the worker reads `url` itself.
    """

    url: str
    display: str
    offset: int
    length: int | None
    document: bool
    data: bytes | None = None
    # A recorded stream (read whole, as a document is): its framing.
    framing: str | None = None


def check_block(plugin: str, kind: str, block: Block, summarize: bool, storage: dict[str, Any]) -> BlockResult:
    """The findings of one block, checked with the SDK the plugin named `plugin` imported on this worker."""
    installed = get_worker().plugins[plugin]
    assert isinstance(installed, SdkPlugin) and installed.sdk is not None
    sdk = installed.sdk
    try:
        data = block.data if block.data is not None else read_range(block, storage)
    except OSError as error:
        return BlockResult(unreadable=error.strerror or str(error))
    if block.framing is not None:
        return check_stream(sdk, kind, block.display, data, block.framing, summarize)
    if block.document:
        return check_document(sdk, kind, block.display, data, summarize)
    return check_lines(sdk, kind, block.display, data, summarize)


def read_range(block: Block, storage: dict[str, Any]) -> bytes:
    """The block's bytes: the lines that start in [offset, offset + length), with their line breaks (fsspec's
    read_block), or the whole file for a document."""
    with fsspec.open(block.url, "rb", **storage) as handle:
        if block.document or block.length is None:
            data = bytes(handle.read())
        else:
            data = bytes(read_block(handle, block.offset, block.length, delimiter=b"\n"))
    # A byte order mark that starts the file is skipped, as local validation skips it (payloads/files.py).
    return data[len(BOM) :] if block.offset == 0 and data.startswith(BOM) else data
