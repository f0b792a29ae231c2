"""The breaking-change rules: each rule's id and severity, the rule of each kind of schema change, how it is said."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from toolgen.core.diagnostics import Severity
from toolgen.policy.lint import Rule

_E, _W = Severity.ERROR, Severity.WARNING
RULES: Mapping[str, Rule] = MappingProxyType(
    {
        rule.id: rule
        for rule in (
            Rule("tool-removed", _E, "a tool is gone: calls to it fail"),
            Rule("tool-renamed", _E, "a tool has a new name (same input schema): calls by the old name fail"),
            Rule("tool-added", _W, "a new tool"),
            Rule("model-renamed", _E, "the generated Args/Result class has a new name: Python imports break"),
            Rule("return-direct-changed", _E, "the result now goes to the user instead of the model, or back"),
            Rule("requires-approval-added", _E, "calls now wait for approval; a loop without an approval hook stops"),
            Rule("requires-approval-removed", _W, "calls no longer wait for approval (review the risk)"),
            Rule("strict-changed", _E, "OpenAI strict mode turned on or off: enforcement and null-for-absent change"),
            Rule("timeout-changed", _W, "the tool's timeout changed"),
            Rule("description-changed", _W, "a title, description or other annotation changed"),
            Rule("default-changed", _W, "a default changed: the generated model fills in another value"),
            Rule("result-schema-removed", _E, "the tool no longer declares a result: its Result model is gone"),
            Rule("result-schema-added", _W, "the tool now declares a result"),
            Rule("argument-removed", _E, "an argument is gone: callers that send it or read it break"),
            Rule("required-argument-added", _E, "a new required argument: existing calls lack it"),
            Rule("argument-added", _W, "a new optional argument"),
            Rule("argument-made-required", _E, "an optional argument is now required"),
            Rule("argument-made-optional", _W, "a required argument is now optional"),
            Rule("argument-type-narrowed", _E, "an argument accepts fewer types (number -> integer, null dropped)"),
            Rule("argument-type-widened", _W, "an argument accepts more types (its Python type changes)"),
            Rule("argument-enum-value-removed", _E, "an argument accepts fewer values (enum value removed or added)"),
            Rule("argument-enum-value-added", _W, "an argument accepts more values"),
            Rule("argument-const-changed", _E, "an argument's const value changed"),
            Rule("argument-constraint-tightened", _E, "a maxLength/maximum/minimum/pattern/minItems/... is stricter"),
            Rule("argument-constraint-loosened", _W, "a constraint on an argument is looser"),
            Rule("argument-object-closed", _E, "an object now refuses properties it does not list"),
            Rule("argument-object-opened", _W, "an object now accepts properties it does not list"),
            Rule("argument-schema-changed", _E, "a keyword toolgen cannot classify changed (allOf, not, if, ...)"),
            Rule("result-field-removed", _E, "a result field is gone: readers of it break"),
            Rule("result-field-added", _W, "a new result field"),
            Rule("result-field-made-optional", _E, "a result field may now be missing: readers break"),
            Rule("result-field-made-required", _W, "a result field is now always present"),
            Rule("result-type-widened", _E, "a result field may have a type readers do not expect (null added, ...)"),
            Rule("result-type-narrowed", _W, "a result field has fewer types"),
            Rule("result-enum-value-added", _E, "a result field may have a value readers do not expect"),
            Rule("result-enum-value-removed", _W, "a result field has fewer values"),
            Rule("result-const-changed", _E, "a result field's const value changed"),
            Rule("result-constraint-loosened", _E, "a constraint on a result field is looser than readers rely on"),
            Rule("result-constraint-tightened", _W, "a constraint on a result field is stricter"),
            Rule("result-object-closed", _W, "a result object now lists all its properties"),
            Rule("result-object-opened", _W, "a result object may carry extra properties (readers ignore them)"),
            Rule("result-schema-changed", _E, "a result keyword toolgen cannot classify changed (allOf, not, ...)"),
        )
    }
)
# What one schema change means, by kind: (its rule for arguments, its rule for results).
KIND_RULES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "removed": ("argument-removed", "result-field-removed"),
        "added-required": ("required-argument-added", "result-field-added"),
        "added-optional": ("argument-added", "result-field-added"),
        "made-required": ("argument-made-required", "result-field-made-required"),
        "made-optional": ("argument-made-optional", "result-field-made-optional"),
        "narrowed": ("argument-type-narrowed", "result-type-narrowed"),
        "widened": ("argument-type-widened", "result-type-widened"),
        "values-removed": ("argument-enum-value-removed", "result-enum-value-removed"),
        "values-added": ("argument-enum-value-added", "result-enum-value-added"),
        "const-changed": ("argument-const-changed", "result-const-changed"),
        "tightened": ("argument-constraint-tightened", "result-constraint-tightened"),
        "loosened": ("argument-constraint-loosened", "result-constraint-loosened"),
        # both stricter and looser (another pattern): breaking for callers and for readers
        "reshaped": ("argument-constraint-tightened", "result-constraint-loosened"),
        "closed": ("argument-object-closed", "result-object-closed"),
        "opened": ("argument-object-opened", "result-object-opened"),
        "unclassified": ("argument-schema-changed", "result-schema-changed"),
        "annotation": ("description-changed", "description-changed"),
        "default": ("default-changed", "default-changed"),
    }
)
# How a change is said of an argument (what it accepts) and of a result (what it can be).
PHRASES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "lost": ("no longer accepts", "can no longer be"),
        "gained": ("now also accepts", "can now also be"),
        "only": ("now accepts only", "can now only be"),
        "any": ("now accepts any type", "can now be any type"),
        "nothing": ("no longer accepts any value", "can no longer have any value"),
        "closed": ("no longer accepts properties it does not list", "no longer carries properties it does not list"),
        "opened": ("now accepts properties it does not list", "may now carry properties it does not list"),
    }
)
