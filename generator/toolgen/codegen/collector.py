"""The cyclic garbage collector paused while a large syntax tree lives."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Turn the cyclic garbage collector off for the block, and back to what it was afterwards.

    A module of thousands of tools parses into millions of nodes, which the collector would traverse again and
    again while they live; an AST holds no reference cycles, so it would find nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
