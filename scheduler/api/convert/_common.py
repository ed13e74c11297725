"""Shared pieces of the version converters: versions, errors, copying, quantities.

Conversion works on raw JSON-like dicts.  Every converter is a pure function:
it deep-copies what it keeps, never mutates its input, and reports problems
either as a :class:`ConversionError` (the object cannot be converted) or as
warning strings appended to a list the caller owns (the object was converted,
but something the user should know happened, e.g. a stale annotation was
ignored).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar, cast

from scheduler.api import refs
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.quantity import Quantity, QuantityError
from scheduler.api.refs import HUB_VERSION as HUB_VERSION
from scheduler.api.refs import LEGACY_VERSIONS as LEGACY_VERSIONS

GROUP: Final = refs.KUEUE_GROUP
Version = refs.KueueVersion
VERSIONS: Final = refs.KUEUE_VERSIONS

Obj = dict[str, Any]
Warnings = list[str]


class ConversionError(ValueError):
    """An object that cannot be converted, with the field path that prevents it.

    ``errors`` holds every violation found (several when legacy validation
    failed); ``field`` and ``message`` describe the first one.
    """

    def __init__(self, field: str, message: str, errors: Sequence[FieldError] = ()) -> None:
        self.field = field
        self.message = message
        self.errors: list[FieldError] = list(errors) or [
            error(field, message, origin="K", rule="CONVERT")
        ]
        rendered = "; ".join(item.render() for item in self.errors)
        super().__init__(rendered)


def version_of(obj: Mapping[str, Any]) -> Version:
    """The ``kueue.x-k8s.io`` version of a raw object: pure; raises ConversionError."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        raise ConversionError("apiVersion", f"must be {GROUP}/<version>, got {api_version!r}")
    group, _, version = api_version.partition("/")
    if group != GROUP:
        raise ConversionError(
            "apiVersion", f'group "{group}" is not {GROUP}; only Kueue objects can be converted'
        )
    return normalize_version(version, "apiVersion")


def normalize_version(version: str, field: str = "") -> Version:
    """Accept ``v1beta2`` or ``kueue.x-k8s.io/v1beta2``: pure."""
    bare = version.split("/", 1)[1] if version.startswith(GROUP + "/") else version
    for known in VERSIONS:
        if bare == known:
            return known
    raise ConversionError(
        field, f'unsupported version "{version}": use one of {", ".join(VERSIONS)}'
    )


def kind_of(obj: Mapping[str, Any]) -> str:
    """The object's kind: pure; raises ConversionError when it is missing."""
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ConversionError("kind", "required: the kind of the object to convert")
    return kind


T = TypeVar("T")


def deep(value: T) -> T:
    """A deep copy of a JSON-like tree, so that outputs never share structure with inputs:
    pure.  Dicts, lists and tuples are copied; every other value (str, number, bool, None,
    a YAML timestamp) is immutable and shared.  ``copy.deepcopy`` does the same at about
    twice the cost (its memo and per-type dispatch: 25 vs 14 us for an admitted Workload),
    and the webhook converts every write of a kuota object once per served legacy version
    (14 % of its samples were deepcopy)."""
    return cast(T, _copy_tree(value))


def _copy_tree(value: object) -> object:
    if isinstance(value, dict):
        return {key: _copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_tree(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copy_tree(item) for item in value)
    return value


def mapping_at(value: Any, path: FieldPath) -> Mapping[str, Any]:
    """``value`` as a mapping (``None`` → empty); raises ConversionError otherwise: pure."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConversionError(str(path), "must be an object")
    return value


def list_at(value: Any, path: FieldPath) -> list[Any]:
    """``value`` as a list (``None`` → empty); raises ConversionError otherwise: pure."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConversionError(str(path), "must be a list")
    return value


def quantity_at(value: Any, path: FieldPath) -> Quantity:
    """Parse a quantity found at ``path``; raises ConversionError on bad syntax: pure."""
    if isinstance(value, bool) or value is None:
        raise ConversionError(
            str(path), f'"{value}" is not a valid quantity (examples: 9, 500m, 36Gi)'
        )
    try:
        return Quantity.parse(value)
    except (QuantityError, TypeError, ValueError):
        raise ConversionError(
            str(path), f'"{value}" is not a valid quantity (examples: 9, 500m, 36Gi)'
        ) from None


def canonical_at(value: Any, path: FieldPath) -> str:
    """The canonical Kubernetes spelling of the quantity at ``path``: pure."""
    return str(quantity_at(value, path))


def base_object(
    obj: Mapping[str, Any], api_version: str, *, skip: tuple[str, ...] = (), owned: bool = False
) -> Obj:
    """Copy every top-level key except ``skip``, with a new apiVersion: pure.

    ``owned``: the caller gives ``obj`` up (the conversion webhook's freshly parsed
    request), so its values are taken over instead of copied, and may be changed.
    """
    out: Obj = {}
    for key, value in obj.items():
        if key in skip:
            continue
        out[key] = value if owned else deep(value)
    out["apiVersion"] = api_version
    return out


def api_version(version: str) -> str:
    """``kueue.x-k8s.io/<version>``: pure."""
    return f"{GROUP}/{version}"
