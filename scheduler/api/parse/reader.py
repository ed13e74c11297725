"""The typed reader every parser uses: one place that knows JSON's shapes.

A raw object may be anything JSON or YAML can express: ``None`` where a map
was expected, a list instead of a string, ``true`` instead of a quantity.
Parsing must never crash on it.  The ``Reader`` reads one field at a time,
checks its type, records a ``FieldError`` (origin ``S``: the CRD schema is
where Kubernetes enforces types) with the field's path when the type is
wrong, and returns ``None`` so the caller carries on with the other fields.
At the end the parser raises ``ParseError`` with every error it found.

What is *not* checked here: presence of required fields and membership of
closed value sets.  Those are validation rules with their own messages and
rule ids (FMT-REQ, FMT-ENUM); the reader returns ``None`` or
the given string and lets validation report them.  ``null`` is read as
"absent", as the API server does.
"""

from __future__ import annotations

import builtins
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.quantity import Quantity, QuantityError

T = TypeVar("T")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def describe(value: object) -> str:
    """How a JSON value's type is named in messages: pure."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (datetime, date)):
        return "a timestamp"
    return type(value).__name__


def spelled(value: object) -> str:
    """The value as the user wrote it, for ``"<v>"`` in messages: pure."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    try:
        return json.dumps(value, default=str, sort_keys=True)
    except (TypeError, ValueError):  # e.g. non-string keys in a YAML map
        return str(value)


_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> timedelta | None:
    """A Go duration (``30m``, ``1h30m``, ``1.5h``, ``300ms``, ``0``) → ``timedelta``;
    ``None`` if invalid: pure.
    """
    body = text
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return timedelta(0)
    if not body:
        return None
    seconds = 0.0
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None or match.group(1) in ("", "."):
            return None
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    return timedelta(seconds=sign * seconds)


def quantity_message(value: object) -> str:
    """FMT-QTY's message (docs/validation.md#field-formats): pure."""
    return f'"{spelled(value)}" is not a valid quantity (examples: 9, 500m, 36Gi)'


class Reader:
    """Reads typed fields out of raw maps, collecting every type error."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    # --- recording --------------------------------------------------------

    def fail(self, path: FieldPath, message: str, *, rule: str = "TYPE") -> None:
        self.errors.append(error(path, message, origin="S", rule=rule))

    def wrong_type(self, path: FieldPath, expected: str, value: object) -> None:
        self.fail(path, f"must be {expected}, not {describe(value)}")

    # --- containers -------------------------------------------------------

    def as_object(self, value: object, path: FieldPath) -> Mapping[str, Any] | None:
        """``value`` as a map with string keys, or ``None`` (absent or wrong type)."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.wrong_type(path, "an object", value)
            return None
        bad_keys = [key for key in value if not isinstance(key, str)]
        if bad_keys:
            self.fail(path, f"keys must be strings, found {spelled(bad_keys[0])}")
            return {key: item for key, item in value.items() if isinstance(key, str)}
        return value

    def object(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> Mapping[str, Any] | None:
        return self.as_object(raw.get(key), path.child(key))

    def items(
        self, raw: Mapping[str, Any], key: str, path: FieldPath
    ) -> Iterator[tuple[Any, FieldPath]]:
        """The items of a list field with their paths (nothing when absent or not a list)."""
        value = raw.get(key)
        here = path.child(key)
        if value is None:
            return
        if not isinstance(value, (list, tuple)):
            self.wrong_type(here, "a list", value)
            return
        for position, item in enumerate(value):
            yield item, here.index(position)

    def objects(
        self,
        raw: Mapping[str, Any],
        key: str,
        path: FieldPath,
        build: Callable[[Mapping[str, Any], FieldPath], T],
    ) -> tuple[T, ...]:
        """A list of objects, each built by ``build``; bad items are reported and skipped."""
        built: list[T] = []
        for item, item_path in self.items(raw, key, path):
            mapping = self.as_object(item, item_path)
            if mapping is None:
                if item is None:
                    self.wrong_type(item_path, "an object", item)
                continue
            built.append(build(mapping, item_path))
        return tuple(built)

    # --- scalars ----------------------------------------------------------

    def string(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong_type(path.child(key), "a string", value)
            return None
        return value

    def text(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> str:
        """A string field whose absence is the empty string."""
        return self.string(raw, key, path) or ""

    def integer(
        self, raw: Mapping[str, Any], key: str, path: FieldPath, *, bits: int = 32
    ) -> int | None:
        """An int32/int64 field; an integral JSON number such as ``3.0`` is accepted."""
        value = raw.get(key)
        if value is None:
            return None
        low, high = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            number = int(value)
        if number is None or not low <= number <= high:
            self.fail(path.child(key), f"must be a {bits}-bit integer, not {spelled(value)}")
            return None
        return number

    def boolean(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> bool | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.wrong_type(path.child(key), "true or false", value)
            return None
        return value

    # ``builtins.object``: inside the class body, ``object`` names the method above.
    def as_quantity(self, value: builtins.object, path: FieldPath) -> Quantity | None:
        if value is None:
            return None
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            try:
                return Quantity.parse(value)
            except QuantityError:
                pass
        self.fail(path, quantity_message(value), rule="FMT-QTY")
        return None

    def quantity(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> Quantity | None:
        return self.as_quantity(raw.get(key), path.child(key))

    def timestamp(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> datetime | None:
        """An RFC 3339 time, returned timezone-aware (UTC when the text has no zone)."""
        value = raw.get(key)
        if value is None:
            return None
        parsed: datetime | None = None
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                parsed = None
        if parsed is None:
            self.fail(
                path.child(key),
                f'"{spelled(value)}" is not a valid time: use RFC 3339, e.g. 2025-03-07T21:19:54Z',
            )
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)

    def duration(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> timedelta | None:
        """A Go duration (``30s``, ``1h30m``)."""
        value = raw.get(key)
        if value is None:
            return None
        parsed = parse_duration(value) if isinstance(value, str) else None
        if parsed is None:
            self.fail(
                path.child(key),
                f'"{spelled(value)}" is not a valid duration: use e.g. 30s, 5m or 1h30m',
            )
        return parsed

    # --- collections of scalars ---------------------------------------------

    def strings(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> tuple[str, ...]:
        result: list[str] = []
        for item, item_path in self.items(raw, key, path):
            if isinstance(item, str):
                result.append(item)
            else:
                self.wrong_type(item_path, "a string", item)
        return tuple(result)

    def string_map(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> dict[str, str]:
        mapping = self.object(raw, key, path)
        result: dict[str, str] = {}
        for name, value in (mapping or {}).items():
            if isinstance(value, str):
                result[name] = value
            else:
                self.wrong_type(path.child(key).key(name), "a string", value)
        return result

    def quantity_map(
        self, raw: Mapping[str, Any], key: str, path: FieldPath
    ) -> dict[str, Quantity]:
        mapping = self.object(raw, key, path)
        result: dict[str, Quantity] = {}
        for name, value in (mapping or {}).items():
            item_path = path.child(key).key(name)
            if value is None:
                self.fail(item_path, quantity_message(value), rule="FMT-QTY")
                continue
            amount = self.as_quantity(value, item_path)
            if amount is not None:
                result[name] = amount
        return result

    def boolean_map(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> dict[str, bool]:
        mapping = self.object(raw, key, path)
        result: dict[str, bool] = {}
        for name, value in (mapping or {}).items():
            if isinstance(value, bool):
                result[name] = value
            else:
                self.wrong_type(path.child(key).key(name), "true or false", value)
        return result

    def number_map(self, raw: Mapping[str, Any], key: str, path: FieldPath) -> dict[str, float]:
        mapping = self.object(raw, key, path)
        result: dict[str, float] = {}
        for name, value in (mapping or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                result[name] = float(value)
            else:
                self.wrong_type(path.child(key).key(name), "a number", value)
        return result
