# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Known event shapes: a wire's common read, matched whole by one regular expression instead of framed and parsed.

Nearly every read of a stream is one of a few events whose text never varies but for an index and a string (an
argument fragment, a text delta). For those, one compiled pattern `fullmatch`ed on the read does the framing, the
parse and most of the state's checks in one C call, and captures only what varies. A shortcut is sound: it takes
a read only when the generic path (framing, `parse_json`, the state's `feed`) would give the very same events and
state; a read of any other text (another key order, whitespace, an extra or repeated key, an escape, a non-ASCII
skipped field, CRLF where LF is matched, two events at once), or one the state would treat otherwise (a block
not open, a sequence number seen or one whose predecessor has not come, a repeat mark seen), is left to the
generic path, untouched.

A shortcut returns the one event the read makes, `TAKEN` when it took the read and makes none, or None when the
read is not its to take. The aggregator asks it only while its decoder holds no partial event. Each wire's
shortcuts are in its `wires/<wire>/stream_shapes.py`, carried with the wire; this module holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .events import parse_json

if TYPE_CHECKING:
    from .state import WireState

# A wire's stream state, typed as Any: a package carries only the stream modules of the wires it asks for, so
# this module, carried by all, may name none of them, not even for type checkers.
AnyState = Any

# One read in, its event, TAKEN, or None (not this shortcut's read).
Shortcut = Callable[[bytes], object]

TAKEN = object()

# A skipped string field: printable ASCII with no quote and no backslash, so its bytes are its value and the
# generic parse cannot fail on it (no escape, no invalid UTF-8, no control character).
ASCII = rb"[ !#-\[\]-~]*"
# A captured string, in two groups: its text up to the first backslash, in the bytes a JSON string holds as they
# are (printable ASCII but quote and backslash, and bytes above 0x7f, checked as UTF-8 when decoded), and the rest
# from that backslash on (empty without one). The rest is taken as any bytes up to the first quote the pattern
# can go on after, and read by the generic parser itself: it takes them only when they are the rest of one string
# (every quote in them escaped), so that quote is the string's end, and its value (escapes, surrogate pairs, a
# lone surrogate it refuses) is the one the generic path reads; else the read is not taken. The classes are written
# as the bytes they take: `re` reads a set of ranges as a bitmap (about 23 instructions a byte), a negated one range
# by range (about 43), and a repeated group of escapes costs a state of its own per escape.
STRING = rb'"([ !#-\[\]-\xff]*)(\\(?s:.)*?|)"'
# A JSON index: no leading zero, no sign, no exponent, and short enough that int() of it is cheap.
INDEX = rb"(0|[1-9][0-9]{0,8})"


def string_value(plain: bytes, escaped: bytes) -> str | None:
    """A captured JSON string's value, or None when the generic parser would reject it (it then sees the read).

    Without an escape the value is the text as UTF-8; with one, the generic parser reads the whole string, so
    the value (surrogate pairs, a lone surrogate it refuses) is the one the generic path reads."""
    try:
        if not escaped:
            return plain.decode()
        value = parse_json(b'"' + plain + escaped + b'"')
    except ValueError:  # UnicodeDecodeError too: invalid UTF-8 fails the parse
        return None
    return value if type(value) is str else None


# Index texts a shortcut keeps the int() of (a stream names a handful of blocks or calls, thousands of times).
_MOST_INDEXES = 1024


def index_value(indexes: dict[bytes, int], text: bytes) -> int:
    """int() of an index text matched by INDEX, kept in `indexes` for the reads that name it again."""
    value = int(text)
    if len(indexes) < _MOST_INDEXES:
        indexes[text] = value
    return value


def new_mark(marks: dict[str, Any], mark: bytes | None, chunk: bytes) -> bool:
    """Keep a chunk's obfuscation pad as the generic path keeps it; False for a pad seen before (maybe a repeat,
    which the generic path tells by comparing the payloads)."""
    if mark is None:
        return True
    key = mark.decode()
    if key in marks:
        return False
    # The chunk's JSON text, as the aggregator hands it to the state: the read less `data: ` and the blank line.
    marks[key] = chunk[6:-2]
    return True


# Framing -> the factory of a wire's shortcut there: a state class's `known_shapes`, which only that class has (a
# subclass, which may read more, has none). Each wire's table is on its state, so that a package carries the
# shortcuts of the wires it carries and no other.
KnownShapes = Mapping[str, Callable[[Any, Any], Shortcut]]


def shortcut_for(state: WireState, decoder: Any, framing: str) -> Shortcut | None:
    """The shortcut for a stream of this state through this decoder, if its wire has known shapes there."""
    known: KnownShapes | None = vars(type(state)).get("known_shapes")
    factory = None if known is None else known.get(framing)
    return None if factory is None else factory(state, decoder)
