# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A stream's events with the client's secrets taken out, a key split across two deltas included.

Each delta's text (answer text, reasoning, one call's arguments) goes out at once, less a tail that may be the
start of a key: the longest end of the text, two characters or more, that begins a piece of a key's form
(secret_forms.py), so fewer characters than a piece. That tail is held until the next delta of the same text
shows whether it was a key, or anything else comes (another kind of delta, a call's end, the end of the
stream), and then goes out first: the events keep their order, and no text goes out twice. A text remembers
how it ended (its last character, and whether it was masked), so a key is masked from its second character
on wherever a delta cuts it, and one split around some other event is masked from where it shows again.
A single character is not held: holding every delta's last letter would cost a new event for most deltas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from ..streams.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    new_object,
    set_delta_arguments,
    set_delta_index,
    set_reasoning,
    set_text,
)
from .secrets import Redactor, render

# Channels: the answer's text, its reasoning, and each tool call's arguments by index.
_TEXT, _REASONING = "text", "reasoning"

# Characters a key's form or a masked stretch may be made of, beyond the forms' own.
_KEYISH = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/%*"


class _Channel:
    """How one text has ended so far: its last characters a key could go on from, and whether they were masked."""

    __slots__ = ("before", "masked")

    def __init__(self) -> None:
        self.before = ""
        self.masked = False


class StreamMask:
    """Masks one stream's events in order: `events()` over them all, or push() each and then end()."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._suspect = redactor.suspect.search
        self._shortest = redactor.shortest
        self._prefixes = redactor.prefixes
        self._chars = redactor.chars
        self._around = redactor.around
        self._most = max(1, redactor.reach - 1)
        # A short key may be one character: it alone is held then, where it would stand alone.
        self._fewest = 1 if redactor.short else 2
        self._channels: dict[Any, _Channel] = {}
        self._held = ""
        self._holder: Any = None

    def events(self, events: Iterable[Event]) -> Iterator[Event]:
        """The masked events, ending with the text still held. The common delta is handled inline, as _quick()
        would: this runs for every chunk of every stream of a client with a key."""
        channels = self._channels
        shortest, suspect = self._shortest, self._suspect
        chars, prefixes, around = self._chars, self._prefixes, self._around
        most, fewest = self._most, self._fewest
        for event in events:
            kind = type(event)
            if kind is TextDelta:
                key: Any = _TEXT
                text = event.text  # type: ignore[union-attr]
            elif kind is ToolCallDelta:
                key, text = event.index, event.arguments  # type: ignore[union-attr]
            elif kind is ReasoningDelta:
                key, text = _REASONING, event.text  # type: ignore[union-attr]
            else:
                yield from self._other(event, kind)
                continue
            holder = self._holder
            channel = channels.get(key)
            if channel is None:
                channel = channels[key] = _Channel()
            before = channel.before
            if (
                (holder is None or holder == key)
                and not channel.masked
                and len(before) < 2
            ):
                pending = text if holder is None else self._held + text
                whole = before + pending if before else pending
                if len(whole) < shortest or suspect(whole) is None:
                    hold = 0
                    run = len(whole) - len(whole.rstrip(chars))
                    if run >= fewest:
                        for size in range(min(most, run), fewest - 1, -1):
                            if whole[-size:] in prefixes:
                                hold = min(len(pending), size)
                                break
                    if hold:
                        self._held, self._holder = pending[-hold:], key
                        given = pending[:-hold]
                    else:
                        self._held, self._holder = "", None
                        given = pending
                    if given:
                        last = given[-1]
                        channel.before = last if last in around else ""
                        yield event if given == text else _delta(key, given)
                    continue
            yield from self._slow(event, key, text)
        yield from self.end()

    def push(self, event: Event) -> list[Event]:
        """The events to give out now for `event`: none while its whole text is held, two when held text of
        another channel goes out first."""
        kind = type(event)
        if kind is TextDelta:
            key: Any = _TEXT
            text = event.text  # type: ignore[union-attr]
        elif kind is ToolCallDelta:
            key, text = event.index, event.arguments  # type: ignore[union-attr]
        elif kind is ReasoningDelta:
            key, text = _REASONING, event.text  # type: ignore[union-attr]
        else:
            return self._other(event, kind)
        given = self._quick(key, text)
        if given is None:
            return self._slow(event, key, text)
        if given == text:
            return [event]
        return [_delta(key, given)] if given else []

    def end(self) -> list[Event]:
        """The text still held, as its last delta."""
        key = self._holder
        if key is None:
            return []
        given = self._feed(key, "", True)
        return [_delta(key, given)] if given else []

    def _other(self, event: Event, kind: type) -> list[Event]:
        out = self.end()
        if kind is ToolCallEnd:
            # Its arguments are over: a later call at this index starts a text of its own.
            self._channels.pop(event.index, None)  # type: ignore[union-attr]
        out.append(self._redactor.event(event))
        return out

    def _quick(self, key: Any, text: str) -> str | None:
        """What of a delta goes out now, when one search shows no piece of a key in the text it ends (its
        channel's last character, the text held and the delta); None when there may be one."""
        holder = self._holder
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = _Channel()
        before = channel.before
        if (holder is not None and holder != key) or channel.masked or len(before) > 1:
            return None
        pending = text if holder is None else self._held + text
        whole = before + pending if before else pending
        if len(whole) >= self._shortest and self._suspect(whole) is not None:
            return None
        hold = self._tail(whole, len(pending))
        if hold:
            self._held, self._holder = pending[-hold:], key
            given = pending[:-hold]
        else:
            self._held, self._holder = "", None
            given = pending
        if given:
            last = given[-1]
            channel.before = last if last in self._around else ""
        return given

    def _slow(self, event: Event, key: Any, text: str) -> list[Event]:
        out = self.end() if self._holder is not None and self._holder != key else []
        given = self._feed(key, text, False)
        if given == text:
            out.append(event)
        elif given:
            out.append(_delta(key, given))
        return out

    def _feed(self, key: Any, text: str, final: bool) -> str:
        """What of the channel's held text and `text` can go out now, masked; the rest is held."""
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = _Channel()
        pending = self._held + text if self._holder == key else text
        before = channel.before
        whole = before + pending if before else pending
        base = len(before)
        spans = self._redactor.spans(whole, base if channel.masked else None)
        cut = len(whole) if final else len(whole) - self._tail(whole, len(pending))
        if spans:
            given = render(whole, spans, base, cut, channel.masked)
            if cut > base:
                channel.masked = any(s < cut <= e for s, e in spans)
        else:
            given = whole[base:cut]
            if cut > base:
                channel.masked = False
        if final or (channel.masked and cut > base):
            # Held text let go before the next delta could show what it was, or a masked stretch that may go on:
            # the next delta is read with the end of this one before it, so that a key split around some other
            # event is masked from where it shows, and a masked one goes on as one stretch.
            run = cut - len(whole[:cut].rstrip(_KEYISH + self._chars))
            channel.before = whole[cut - min(run, self._most) : cut]
        elif cut > base:
            last = whole[cut - 1]
            channel.before = last if last in self._around else ""
        self._held = whole[cut:]
        self._holder = key if self._held else None
        return given

    def _tail(self, whole: str, most: int) -> int:
        """How many of the last `most` characters of `whole` to hold: those of the longest end of it, two
        characters or more (one for a short key), that may begin a piece of a key."""
        run = len(whole) - len(whole.rstrip(self._chars))
        if run < self._fewest:
            return 0
        prefixes = self._prefixes
        for size in range(min(run, self._most), self._fewest - 1, -1):
            if whole[-size:] in prefixes:
                return min(size, most)
        return 0


def _delta(key: Any, text: str) -> Event:
    """A delta of the channel `key` carrying `text`, made as the stream states make theirs."""
    event: Any
    if type(key) is int:
        event = new_object(ToolCallDelta)
        set_delta_index(event, key)
        set_delta_arguments(event, text)
    elif key == _TEXT:
        event = new_object(TextDelta)
        set_text(event, text)
    else:
        event = new_object(ReasoningDelta)
        set_reasoning(event, text)
    return event  # type: ignore[no-any-return]


def masked(events: Iterable[Event], redactor: Redactor) -> Iterator[Event]:
    """The events with the secrets taken out; the events as they are when there is no secret to mask."""
    if not redactor:
        return iter(events)
    return StreamMask(redactor).events(events)


async def amasked(
    events: AsyncIterator[Event], redactor: Redactor
) -> AsyncIterator[Event]:
    """The async twin of masked()."""
    if not redactor:
        async for event in events:
            yield event
        return
    mask = StreamMask(redactor)
    async for event in events:
        for out in mask.push(event):
            yield out
    for out in mask.end():
        yield out
