"""The shape pass: the parse step of validation, before any rule runs.

See docs/validation.md#order-of-processing.

Validation works on raw dicts, so a value may have any JSON type.  Instead of
sprinkling ``isinstance`` checks and try/except through every rule, one walker
compares the object with the declared shape of its kind (``known_fields``) and
produces a *cleaned copy*:

* a field of the wrong type is reported once (rule ``TYPE``, origin S) and
  replaced by the ``INVALID`` sentinel, so the rules that need its value can
  skip it while the rules that only ask "is it present?" still see it;
* a field the kind does not have is reported (rule ``UNKNOWN-FIELD``, or the
  dedicated rule of a known field of another version, e.g. ``CQ-V1``) and
  dropped;
* ``null`` is treated as absent, as the API server does.

Rules then read the cleaned copy with plain ``dict.get`` and ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.parse.reader import describe


class _Invalid:
    """Marker for a value that failed the shape pass (already reported)."""

    _instance: _Invalid | None = None

    def __new__(cls) -> _Invalid:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "INVALID"

    def __bool__(self) -> bool:
        return True


INVALID: Final = _Invalid()


class Scalar(Enum):
    """Leaf types of the shape table."""

    STR = "a string"
    INT = "an integer"
    BOOL = "a boolean (true or false)"
    NUMBER = "a number"
    QTY = "a quantity (a number or a string such as 500m or 36Gi)"
    ANY = "any value"


@dataclass(frozen=True)
class Foreign:
    """A field that belongs to another API version: reported with a hint."""

    rule: str
    message: str


@dataclass(frozen=True)
class Obj:
    """An object with a closed (or, with ``open=True``, partly known) set of fields."""

    fields: Mapping[str, Shape]
    open: bool = False
    foreign: Mapping[str, Foreign] = field(default_factory=dict)


@dataclass(frozen=True)
class ListOf:
    item: Shape


@dataclass(frozen=True)
class MapOf:
    value: Shape


Shape = Scalar | Obj | ListOf | MapOf


def _type_error(path: FieldPath, expected: str, value: object) -> FieldError:
    return error(path, f"must be {expected}, not {describe(value)}", origin="S", rule="TYPE")


def _scalar(value: object, kind: Scalar, path: FieldPath, errors: list[FieldError]) -> object:
    if kind is Scalar.ANY:
        return value
    if kind is Scalar.STR and isinstance(value, str):
        return value
    if kind is Scalar.BOOL and isinstance(value, bool):
        return value
    if kind is Scalar.INT and not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if kind is Scalar.NUMBER and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind is Scalar.QTY and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value
    errors.append(_type_error(path, kind.value, value))
    return INVALID


def clean(value: object, shape: Shape, path: FieldPath, errors: list[FieldError]) -> Any:
    """Check ``value`` against ``shape``; return the cleaned copy (see module doc): pure
    apart from appending to ``errors``."""
    if isinstance(shape, Scalar):
        return _scalar(value, shape, path, errors)
    if isinstance(shape, ListOf):
        if not isinstance(value, (list, tuple)):
            errors.append(_type_error(path, "a list", value))
            return INVALID
        return [
            None if item is None else clean(item, shape.item, path.index(position), errors)
            for position, item in enumerate(value)
        ]
    if isinstance(shape, MapOf):
        if not isinstance(value, Mapping):
            errors.append(_type_error(path, "an object (a map)", value))
            return INVALID
        cleaned_map: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(_type_error(path.key(str(key)), "a map with string keys", key))
                continue
            cleaned_map[key] = (
                None if item is None else clean(item, shape.value, path.key(key), errors)
            )
        return cleaned_map
    if not isinstance(value, Mapping):
        errors.append(_type_error(path, "an object", value))
        return INVALID
    cleaned: dict[str, Any] = {}
    for key, item in value.items():
        name = key if isinstance(key, str) else str(key)
        if name in shape.fields:
            if item is not None:
                cleaned[name] = clean(item, shape.fields[name], path.child(name), errors)
        elif name in shape.foreign:
            hint = shape.foreign[name]
            errors.append(error(path.child(name), hint.message, origin="K", rule=hint.rule))
        elif shape.open:
            cleaned[name] = item
        else:
            errors.append(
                error(path.child(name), f'unknown field "{name}"', origin="K", rule="UNKNOWN-FIELD")
            )
    return cleaned
