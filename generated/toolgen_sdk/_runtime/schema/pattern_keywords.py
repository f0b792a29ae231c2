# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""jsonschema's keywords that match patterns, matching them through a PatternCache: in bounded time.

jsonschema calls Python's re for `pattern`, for `patternProperties`, and to tell which properties
`additionalProperties` and `unevaluatedProperties` leave over; re can take minutes on one string. A validator class
made by `bounded_keywords` does all four through the cache (patterns.py). A pattern that runs out of time is an
error of the value at its place, said as one (`expected a string matching '...' (the pattern could not be checked
within 1 s), got ...`); a pattern neither engine reads raises PatternError, as re.error was raised before.
The two evaluated-property walks follow jsonschema's own (_utils.py and _legacy_keywords.py) step for step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .backtrack import PatternTimeout
from .patterns import PatternCache, unchecked_pattern

# The keyword an error of a pattern that ran out of time is reported under (its sentence is its message).
UNCHECKED = "x-toolgen-pattern-unchecked"

Search = Callable[[str, str], bool]


def bounded_keywords(base: Any, patterns: PatternCache) -> Any:
    """`base`, a jsonschema validator class, extended: every pattern it matches goes through `patterns`."""
    from jsonschema import validators  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped,import-not-found,unused-ignore]

    search = patterns.search

    def unchecked(timeout: PatternTimeout, value: Any, *path: str) -> Any:
        message = unchecked_pattern(str(timeout), patterns.seconds, value)
        return ValidationError(message, validator=UNCHECKED, path=path, instance=value)

    def pattern(
        validator: Any, wanted: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        try:
            if search(wanted, instance):
                return
        except PatternTimeout as timeout:
            yield unchecked(timeout, instance)
            return
        yield ValidationError(f"{instance!r} does not match {wanted!r}")

    def pattern_properties(
        validator: Any, properties: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for wanted, subschema in properties.items():
            for key, value in instance.items():
                try:
                    found = search(wanted, key)
                except PatternTimeout as timeout:
                    yield unchecked(timeout, key, key)
                    continue
                if found:
                    yield from validator.descend(
                        value, subschema, path=key, schema_path=wanted
                    )

    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        try:
            extras = _additional(instance, schema, search)
        except PatternTimeout as timeout:
            yield unchecked(timeout, instance)
            return
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            # jsonschema's own messages.
            if "patternProperties" in schema:
                verb = "does" if len(extras) == 1 else "do"
                joined = ", ".join(repr(each) for each in sorted(extras))
                wanted = ", ".join(
                    repr(each) for each in sorted(schema["patternProperties"])
                )
                yield ValidationError(
                    f"{joined} {verb} not match any of the regexes: {wanted}"
                )
            else:
                names, verb = _extras_message(sorted(extras, key=str))
                yield ValidationError(
                    f"Additional properties are not allowed ({names} {verb} unexpected)"
                )

    def unevaluated(legacy: bool) -> Callable[..., Iterator[Any]]:
        def unevaluated_properties(
            validator: Any, leftover: Any, instance: Any, schema: Any
        ) -> Iterator[Any]:
            if not validator.is_type(instance, "object"):
                return
            try:
                evaluated = _evaluated(validator, instance, schema, search, legacy)
            except PatternTimeout as timeout:
                yield unchecked(timeout, instance)
                return
            invalid = [
                key
                for key in instance
                if key not in evaluated
                for _ in validator.descend(
                    instance[key], leftover, path=key, schema_path=key
                )
            ]
            if not invalid:
                return
            if leftover is False:
                names, verb = _extras_message(sorted(invalid, key=str))
                yield ValidationError(
                    f"Unevaluated properties are not allowed ({names} {verb} unexpected)"
                )
            else:
                names, verb = _extras_message(invalid)
                yield ValidationError(
                    "Unevaluated properties are not valid under the given schema "
                    f"({names} {verb} unevaluated and invalid)"
                )

        return unevaluated_properties

    keywords: dict[str, Any] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    if "unevaluatedProperties" in base.VALIDATORS:
        legacy = base.VALIDATORS["unevaluatedProperties"].__name__.endswith("2019")
        keywords["unevaluatedProperties"] = unevaluated(legacy)
    extend: Any = validators.extend
    bounded = extend(
        base, {key: f for key, f in keywords.items() if key in base.VALIDATORS}
    )
    # Where models/check.py finds the cache, to give each check one deadline.
    bounded.PATTERNS = patterns
    return bounded


def _extras_message(extras: list[Any]) -> tuple[str, str]:
    verb = "was" if len(extras) == 1 else "were"
    return ", ".join(repr(extra) for extra in extras), verb


def _additional(instance: Any, schema: Any, search: Search) -> list[Any]:
    """The properties of `instance` neither `properties` nor `patternProperties` covers, in its order."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(search(p, key) for p in patterns)
    ]


def _evaluated(
    validator: Any, instance: Any, schema: Any, search: Search, legacy: bool
) -> list[Any]:
    """The properties of `instance` some keyword of `schema` evaluates: jsonschema's walk for 2020-12, or its
    draft 2019-09 one (`legacy`), with patterns matched by `search`."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[Any] = []
    for keyword in ("$ref", "$recursiveRef" if legacy else "$dynamicRef"):
        reference = schema.get(keyword)
        if reference is None:
            continue
        if keyword == "$recursiveRef":
            from referencing.jsonschema import lookup_recursive_ref  # type: ignore[import-not-found,unused-ignore]

            resolved = lookup_recursive_ref(validator._resolver)
        else:
            resolved = validator._resolver.lookup(reference)
        there = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
        keys.extend(_evaluated(there, instance, resolved.contents, search, legacy))
    if legacy:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            value = schema.get(keyword)
            if validator.is_type(value, "boolean") and value:
                keys += instance.keys()
            elif validator.is_type(value, "object"):
                keys += [name for name in value if name in instance]
    else:
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            keys += properties.keys() & instance.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            subschema = schema.get(keyword)
            if subschema is not None:
                keys += [
                    key
                    for key, value in instance.items()
                    if next(validator.descend(value, subschema), None) is None
                ]
    for wanted in schema.get("patternProperties", {}):
        keys += [key for key in instance if search(wanted, key)]
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys += _evaluated(validator, instance, subschema, search, legacy)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys += _evaluated(validator, instance, subschema, search, legacy)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated(validator, instance, schema["if"], search, legacy)
            if "then" in schema:
                keys += _evaluated(validator, instance, schema["then"], search, legacy)
        elif "else" in schema:
            keys += _evaluated(validator, instance, schema["else"], search, legacy)
    return keys
