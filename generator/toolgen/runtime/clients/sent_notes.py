# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a request a model client sends loses on its wire, for the run's `note` events: every loss, at a cost paid
only by a conversation that holds media.

A conversation of text (and reasoning, and calls) loses on the way only what `place` moves or drops: its notes
come from a scan that builds nothing when nothing is out of place, the common case. Once a message holds an
image, audio or a file, more can go (a file's name where the wire has no field for one, an image's `detail`), and
only the round trip of `losses.request_losses` finds it: the request is encoded and read back, and the notes
about the messages' content are added, so that no part of what a message holds is left out in silence. Notes
about settings and tool definitions are not repeated here (the run reports those before its first request), nor
about a message's own fields: a tool message's `name` is the loop's bookkeeping, which wires pairing results by
id have no field for, not something a model was meant to read.

Notes point into the request's messages (`/messages/2/content/3/filename: ...`). The conversation only grows,
so a run reports each distinct note once (loop/model_calls.py): an image a tool returned at step 2 is named at
step 2, not again at every later step; a result that holds the same loss at step 4 is another part, named again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..wires.canonical import Request
from ..wires.codecs import encode_request
from ..wires.losses import request_losses
from ..wires.placement import placement_notes

_MEDIA = ("image", "audio", "file")
_CONTENT = re.compile(r"^/messages/\d+/content[/:]")


def sent_notes(request: Request, wire: str) -> tuple[str, ...]:
    """One note per thing `request` loses as a body of `wire` (see the module docstring); never raises."""
    notes = placement_notes(request.messages, wire)
    if not any(_holds_media(message) for message in request.messages):
        return notes
    try:
        found = request_losses(request, wire, encode_request(request, wire))
    except Exception:  # noqa: BLE001 - a request the encoder refuses fails by name when sent; these notes stand
        return notes
    about_content = (note for note in found if _CONTENT.match(note))
    return tuple(dict.fromkeys((*notes, *about_content)))


def _holds_media(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") in _MEDIA for part in content
    )
