"""Content hashes toolgen records: of bytes, and of text with its line endings normalized."""

from __future__ import annotations

import hashlib


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_digest(text: str) -> str:
    """Hash of text with line endings normalized, so a CRLF checkout hashes like an LF one."""
    return digest(text.replace("\r\n", "\n").encode())
