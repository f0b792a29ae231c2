"""Diagnostics: one finding about one place in one input file, printed as `path:line:col: severity rule message`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    col: int
    severity: Severity
    rule: str
    message: str
    pointer: str = ""

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity.value} {self.rule} {self.message}"

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Diagnostic:
        return cls(
            str(data["path"]),
            int(str(data["line"])),
            int(str(data["col"])),
            Severity(str(data["severity"])),
            str(data["rule"]),
            str(data["message"]),
            str(data.get("pointer", "")),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "severity": self.severity.value,
            "rule": self.rule,
            "message": self.message,
            "pointer": self.pointer,
        }


def normalized(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Sorted by place, duplicates dropped: the order users see must not depend on discovery order."""
    return tuple(sorted(set(diagnostics)))


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)
