"""A wire's first use on several threads at once: every thread gets the whole module, none a half-imported one.

The conversion functions look a wire's module up in sys.modules before importing it; a module another thread is
still executing is there already, half made ("partially initialized module ... has no attribute
'encode_request'"). Served runs resumed together after a restart hit this on their first model calls.
"""

from __future__ import annotations

import subprocess
import sys

from support.projects import REPO_ROOT

RACE = """
import sys, threading
from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import decode, encode_request

barrier = threading.Barrier(8)
errors = []

def first_use(wire):
    barrier.wait()
    try:
        body = encode_request(Request([{"role": "user", "content": "hi"}]), wire)
        decode(body, wire, "request")
    except Exception as error:  # the failure under test: reported, not raised on a thread
        errors.append(f"{wire}: {error!r}")

wires = ["openai-chat", "anthropic", "gemini", "openai-responses"] * 2
threads = [threading.Thread(target=first_use, args=(wire,)) for wire in wires]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("\\n".join(errors) or "ok")
"""


def test_a_wire_first_used_on_eight_threads_at_once_is_whole_on_each() -> None:
    # Fresh processes: the race is in the first import, which each process makes once.
    for _ in range(8):
        done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok", done.stdout
