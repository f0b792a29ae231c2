"""toolgen.yaml's `features:` by name: which there are, what each needs, and the errors a config gets for them.

Kept apart from targets/features.py (which picks the runtime modules a package carries) so that reading a config
imports nothing of the targets: every command reads one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Every feature, sorted; a config that names none gets all of them.
FEATURES = ("http", "loop", "mcp", "serve", "streams")
# What a feature needs, all of it (what a need needs is listed too): naming it without them is a config error
# naming both. The model clients and the loop read a model's answer as the aggregator's events (`streams`).
NEEDS: Mapping[str, tuple[str, ...]] = {
    "http": ("streams",),
    "loop": ("streams",),
    "serve": ("http", "loop", "streams"),
}
# The command line of `python -m <package> "prompt"` (and the demo behind it) needs these.
COMMAND_LINE = ("http", "loop", "streams")


def canonical_feature(name: str) -> str:
    """`name` when it is a feature; ValueError naming the one it most likely misspells and the choices."""
    if name in FEATURES:
        return name
    from toolgen.source.keyword_typos import nearest_name

    meant = nearest_name(name, FEATURES, closed=True)
    hint = f"; did you mean {meant!r}?" if meant else ""
    raise ValueError(f"unknown feature {name!r}{hint} (one of {', '.join(FEATURES)})")


def feature_problems(features: Iterable[str], *, demo: bool) -> list[str]:
    """Each feature named without one it needs, and `demo: true` without the command line's features."""
    chosen = set(features)
    problems = [
        f"feature {name!r} needs {', '.join(repr(n) for n in NEEDS[name] if n not in chosen)}: add it to features:"
        for name in sorted(chosen)
        if not set(NEEDS.get(name, ())) <= chosen
    ]
    if demo and not set(COMMAND_LINE) <= chosen:
        missing = ", ".join(repr(n) for n in COMMAND_LINE if n not in chosen)
        problems.append(
            f"demo: true needs feature {missing} (the command line that runs the demo): add it to features:"
        )
    return problems
