# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A backtracking matcher for the patterns Rust's linear regex refuses (lookaround, backreferences), bounded in time.

It runs the tree regex_tree.py reads (Python's re syntax and ECMA-262's), as Python's re would, except that `$` is
the end of the text only, as in ECMA-262 and Rust. Backtracking without a memory can take exponential time
(`^(a+)+$` on `aaa...!`): every branch point it has tried at a position is remembered, so a pattern without
backreferences costs at most (program size x text length) steps; with backreferences the captures are part of
the remembered state. Either way a deadline bounds the search, and PatternTimeout says it ran out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .regex_tree import (
    AWORDB,
    BOL,
    BOS,
    EOL,
    EOS,
    NWORDB,
    WORDB,
    Node,
    PatternSyntaxError,
    ascii_word,
    parse_pattern,
    word,
)


class PatternTimeout(Exception):
    """A pattern whose check did not finish before its deadline."""


# The most instructions a program may have (a counted repeat is written out).
MAX_PROGRAM = 100_000
# The bitmap of tried branch points is kept up to this many bits; past it, a set (bounded by the deadline).
_MAX_BITS = 1 << 27

# Instructions.
_CHAR, _CHARB, _SPLIT, _JMP, _SAVE, _ASSERT, _LOOK, _ATOMIC, _BACKREF, _MATCH = range(
    10
)


class _Compiler:
    """The tree as instructions: one list for the pattern, then one segment per lookaround and atomic group."""

    def __init__(self, names: Mapping[str, int], captures: bool) -> None:
        self.ops: list[int] = []
        self.first: list[Any] = []
        self.second: list[Any] = []
        self.names = names
        self.captures = captures
        self.segments: list[int] = []
        self.pending: list[tuple[int, Node, bool]] = []

    def emit(self, op: int, first: Any = None, second: Any = None) -> int:
        if len(self.ops) >= MAX_PROGRAM:
            raise PatternSyntaxError("the pattern is too large to check")
        self.ops.append(op)
        self.first.append(first)
        self.second.append(second)
        return len(self.ops) - 1

    def program(self, tree: Node) -> None:
        self.node(tree, False)
        self.emit(_MATCH)
        while self.pending:
            segment, node, backward = self.pending.pop(0)
            self.segments[segment] = len(self.ops)
            self.node(node, backward)
            self.emit(_MATCH)

    def segment(self, node: Node, backward: bool) -> int:
        self.segments.append(-1)
        self.pending.append((len(self.segments) - 1, node, backward))
        return len(self.segments) - 1

    def node(self, node: Node, backward: bool) -> None:
        kind = node[0]
        if kind == "char":
            self.emit(_CHARB if backward else _CHAR, node[1])
        elif kind == "seq":
            for item in reversed(node[1]) if backward else node[1]:
                self.node(item, backward)
        elif kind == "alt":
            ends = []
            for index, option in enumerate(node[1]):
                if index < len(node[1]) - 1:
                    split = self.emit(_SPLIT, len(self.ops) + 1)
                    self.node(option, backward)
                    ends.append(self.emit(_JMP))
                    self.second[split] = len(self.ops)
                else:
                    self.node(option, backward)
            for end in ends:
                self.first[end] = len(self.ops)
        elif kind == "rep":
            self.repeat(node, backward)
        elif kind == "group":
            index = node[2]
            if self.captures:
                self.emit(_SAVE, 2 * index + (1 if backward else 0))
            self.node(node[1], backward)
            if self.captures:
                self.emit(_SAVE, 2 * index + (0 if backward else 1))
        elif kind == "assert":
            self.emit(_ASSERT, node[1])
        elif kind == "look":
            _, body, behind, negate = node
            self.emit(_LOOK, self.segment(body, behind), negate)
        elif kind == "atomic":
            self.emit(_ATOMIC, self.segment(node[1], backward))
        else:  # a backreference
            index = node[1] if isinstance(node[1], int) else self.names[node[1]]
            self.emit(_BACKREF, index, (node[2], backward))

    def repeat(self, node: Node, backward: bool) -> None:
        _, body, low, high, greedy = node
        for _ in range(low):
            self.node(body, backward)
        if high is None:
            loop = self.emit(_SPLIT)
            self.node(body, backward)
            self.emit(_JMP, loop)
            self.fill(loop, loop + 1, len(self.ops), greedy)
            return
        skips = []
        for _ in range(high - low):
            skips.append(self.emit(_SPLIT))
            self.node(body, backward)
        for split in skips:
            self.fill(split, split + 1, len(self.ops), greedy)

    def fill(self, split: int, take: int, leave: int, greedy: bool) -> None:
        self.first[split], self.second[split] = (
            (take, leave) if greedy else (leave, take)
        )


class Backtracker:
    """One pattern compiled for the bounded backtracking search; `search` may be called from any thread."""

    def __init__(self, pattern: str) -> None:
        read = parse_pattern(pattern)
        self.pattern = pattern
        self.backrefs = read.backrefs
        # Nothing Rust's regex lacks: no lookaround, atomic group or backreference.
        self.plain = not read.special and not self.backrefs
        compiler = _Compiler(read.names, captures=self.backrefs)
        compiler.program(read.tree)
        self.ops = compiler.ops
        self.first = compiler.first
        self.second = compiler.second
        self.segments = compiler.segments
        self.slots = 2 * (read.groups + 1)
        self.anchored = (
            bool(self.ops) and self.ops[0] == _ASSERT and self.first[0] == BOS
        )

    def search(self, text: str, deadline: float) -> bool:
        """Whether the pattern matches anywhere in `text`; PatternTimeout once `deadline` (monotonic) passes."""
        run = _Run(self, text, deadline)
        starts = range(1) if self.anchored else range(len(text) + 1)
        empty: tuple[int | None, ...] = (None,) * self.slots
        return any(run.run(0, start, empty) is not None for start in starts)


class _Run:
    """One search of one text: the branch points tried, the lookarounds answered, the steps taken."""

    def __init__(self, program: Backtracker, text: str, deadline: float) -> None:
        self.program = program
        self.text = text
        self.deadline = deadline
        self.steps = 0
        self.stride = len(text) + 1
        bits = len(program.ops) * self.stride
        self.memo = not program.backrefs
        self.bitmap = (
            bytearray((bits >> 3) + 1) if self.memo and bits <= _MAX_BITS else None
        )
        self.tried: set[Any] = set()
        self.looks: dict[tuple[int, int], bool] = {}
        self.ends: dict[tuple[int, int], int | None] = {}

    def seen(self, pc: int, pos: int, caps: tuple[int | None, ...]) -> Any:
        """The state's key, marked tried; None when it was tried already (it failed, or it is a loop)."""
        if self.bitmap is not None:
            key = pc * self.stride + pos
            byte, bit = key >> 3, 1 << (key & 7)
            if self.bitmap[byte] & bit:
                return None
            self.bitmap[byte] |= bit
            return key
        state = (pc, pos) if self.memo else (pc, pos, caps)
        if state in self.tried:
            return None
        self.tried.add(state)
        return state

    def forget(self, keys: list[Any]) -> None:
        """States a successful sub-search tried: they may lead to a match there, so they are not failures."""
        if self.bitmap is not None:
            for key in keys:
                self.bitmap[key >> 3] &= ~(1 << (key & 7)) & 0xFF
        else:
            self.tried.difference_update(keys)

    def run(
        self, pc: int, pos: int, caps: tuple[int | None, ...]
    ) -> tuple[int, tuple[int | None, ...]] | None:
        """The end of the first match of the segment at `pc` from `pos`, and its captures; None if none."""
        program, text = self.program, self.text
        ops, first, second = program.ops, program.first, program.second
        size = len(text)
        stack: list[tuple[int, int, tuple[int | None, ...]]] = []
        marked: list[Any] = []
        while True:
            self.steps += 1
            if not self.steps & 1023 and time.monotonic() > self.deadline:
                raise PatternTimeout(program.pattern)
            op = ops[pc]
            ok = True
            if op == _CHAR:
                ok = pos < size and first[pc](text[pos])
                pos += 1
                pc += 1
            elif op == _SPLIT:
                key = self.seen(pc, pos, caps)
                if key is None:
                    ok = False
                else:
                    marked.append(key)
                    stack.append((second[pc], pos, caps))
                    pc = first[pc]
            elif op == _JMP:
                pc = first[pc]
            elif op == _CHARB:
                ok = pos > 0 and first[pc](text[pos - 1])
                pos -= 1
                pc += 1
            elif op == _SAVE:
                slot = first[pc]
                caps = (*caps[:slot], pos, *caps[slot + 1 :])
                pc += 1
            elif op == _ASSERT:
                ok = self.holds(first[pc], pos)
                pc += 1
            elif op == _LOOK:
                found = self.look(first[pc], second[pc], pos, caps)
                ok = found is not None
                caps = found if found is not None else caps
                pc += 1
            elif op == _ATOMIC:
                end = self.atomic(first[pc], pos, caps)
                ok = end is not None
                if end is not None:
                    pos, caps = end
                pc += 1
            elif op == _BACKREF:
                ok, pos = self.backref(first[pc], second[pc], pos, caps)
                pc += 1
            else:  # _MATCH
                self.forget(marked)
                return pos, caps
            if not ok:
                if not stack:
                    return None
                pc, pos, caps = stack.pop()

    def atomic(
        self, segment: int, pos: int, caps: tuple[int | None, ...]
    ) -> tuple[int, tuple[int | None, ...]] | None:
        """Where the first match of an atomic group from `pos` ends: it is never tried again for another."""
        if not self.memo:
            return self.run(self.program.segments[segment], pos, caps)
        key = (segment, pos)
        if key not in self.ends:
            found = self.run(self.program.segments[segment], pos, caps)
            self.ends[key] = None if found is None else found[0]
        end = self.ends[key]
        return None if end is None else (end, caps)

    def look(
        self, segment: int, negate: bool, pos: int, caps: tuple[int | None, ...]
    ) -> tuple[int | None, ...] | None:
        """The captures after a lookaround that holds at `pos`, or None where it does not."""
        key = (segment, pos)
        if self.memo and key in self.looks:
            return caps if self.looks[key] else None
        found = self.run(self.program.segments[segment], pos, caps)
        holds = (found is None) if negate else (found is not None)
        if self.memo:
            self.looks[key] = holds
        if not holds:
            return None
        return caps if negate or found is None else found[1]

    def holds(self, kind: int, pos: int) -> bool:
        text = self.text
        if kind == BOS:
            return pos == 0
        if kind == EOS:
            return pos == len(text)
        if kind == BOL:
            return pos == 0 or text[pos - 1] == "\n"
        if kind == EOL:
            return pos == len(text) or text[pos] == "\n"
        is_word = word if kind in (WORDB, NWORDB) else ascii_word
        before = pos > 0 and is_word(text[pos - 1])
        after = pos < len(text) and is_word(text[pos])
        return (before != after) is (kind in (WORDB, AWORDB))

    def backref(
        self,
        index: int,
        how: tuple[bool, bool],
        pos: int,
        caps: tuple[int | None, ...],
    ) -> tuple[bool, int]:
        start, end = caps[2 * index], caps[2 * index + 1]
        if start is None or end is None:
            return (
                False,
                pos,
            )  # as Python's re: a group that took no part matches nothing
        fold, backward = how
        captured = self.text[min(start, end) : max(start, end)]
        here = (
            self.text[pos - len(captured) : pos]
            if backward and pos >= len(captured)
            else self.text[pos : pos + len(captured)]
            if not backward
            else None
        )
        if here is None or len(here) != len(captured):
            return False, pos
        same = here.lower() == captured.lower() if fold else here == captured
        return same, (pos - len(captured) if backward else pos + len(captured))
