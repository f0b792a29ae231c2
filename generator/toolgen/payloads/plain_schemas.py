"""A model's pydantic-core schema as plain JSON data: the runtime's `plain_schema`, which generated adapters use too."""

from __future__ import annotations

from toolgen.runtime import plain_schema

__all__ = ["plain_schema"]
