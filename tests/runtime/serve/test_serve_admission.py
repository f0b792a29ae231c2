"""Which connection the service closes to make room at its cap, and when it refuses the newcomer instead."""

from __future__ import annotations

from toolgen.runtime.app.server_limits import ServerLimits, _Admission


class Connection:
    """A held connection as the admission sees one: it can be dropped, and says whether it was."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dropped = False

    def drop(self, answer: bytes) -> None:
        self.dropped = True

    def __repr__(self) -> str:
        return self.name


def _admitted(admission: _Admission, name: str, *, read: bool = True, waiting: bool = True) -> Connection:
    connection = Connection(name)
    assert admission.admit(connection)
    if waiting:
        admission.waiting[connection] = None
    if read:
        admission.read_once(connection)
    return connection


def test_the_connection_awaiting_a_request_longest_makes_room() -> None:
    admission = _Admission(ServerLimits(max_connections=2))
    first, second = _admitted(admission, "first"), _admitted(admission, "second")
    newcomer = Connection("newcomer")
    assert admission.admit(newcomer)
    assert first.dropped and not second.dropped and not newcomer.dropped


def test_a_connection_whose_first_bytes_are_unread_is_not_closed_the_newcomer_is_refused() -> None:
    # A burst admitted in one go: none of them read yet, so a client among them that had sent its request
    # must not be closed by the rest of the burst.
    admission = _Admission(ServerLimits(max_connections=2))
    first = _admitted(admission, "first", read=False)
    second = _admitted(admission, "second", read=False)
    late = Connection("late")
    assert not admission.admit(late)
    assert not first.dropped and not second.dropped
    assert admission.held == {first, second}
    # Once the loop has had its chance to read it, the longest waiting makes way as before.
    admission.read_once(first)
    assert admission.admit(late)
    assert first.dropped and not second.dropped


def test_connections_being_answered_are_never_closed_to_make_room() -> None:
    admission = _Admission(ServerLimits(max_connections=1))
    answering = _admitted(admission, "answering", waiting=False)
    assert not admission.admit(Connection("late"))
    assert not answering.dropped


def test_a_released_connection_leaves_no_trace() -> None:
    admission = _Admission(ServerLimits(max_connections=1))
    gone = _admitted(admission, "gone", read=False)
    admission.release(gone)
    assert not admission.held and not admission.waiting and not admission.unread
    assert admission.admit(Connection("next"))
