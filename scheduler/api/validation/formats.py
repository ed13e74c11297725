"""Common format rules (FMT-*; docs/validation.md#field-formats), in one place.

Every kind's validator words its messages through these helpers, so that the
same problem reads the same everywhere (``"x_y" is not a valid flavor name:
use at most 253 lower-case letters, ...``).  The predicates follow Kubernetes
(DNS-1123 subdomain / label, qualified name, label value) exactly.  Label
selectors (FMT-SEL) are both validated and, for the configuration rule CFG-6,
evaluated here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.quantity import Quantity, QuantityError
from scheduler.api.rule_text import DNS_LABEL, DNS_SUBDOMAIN, LABEL_HINT, SUBDOMAIN_HINT

_SUBDOMAIN_RE = re.compile(DNS_SUBDOMAIN)
_LABEL_RE = re.compile(DNS_LABEL)
_NAME_PART_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

QUALIFIED_NAME_HINT = (
    'use an optional DNS-subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or '
    '".", starting and ending with a letter or digit'
)
LABEL_VALUE_HINT = (
    'use at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit '
    "(or leave it empty)"
)


# --- predicates (pure) ---------------------------------------------------------


def is_subdomain(value: str) -> bool:
    """DNS-1123 subdomain: pure."""
    return 0 < len(value) <= 253 and _SUBDOMAIN_RE.fullmatch(value) is not None


def is_label(value: str) -> bool:
    """DNS-1123 label: pure."""
    return 0 < len(value) <= 63 and _LABEL_RE.fullmatch(value) is not None


def is_dns1035_label(value: str) -> bool:
    """DNS-1035 label (starts with a letter): pure."""
    return 0 < len(value) <= 63 and _DNS1035_RE.fullmatch(value) is not None


def is_qualified_name(value: str) -> bool:
    """Qualified name (label key, resource name, taint key): pure."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not is_subdomain(prefix) or "/" in prefix):
        return False
    return 0 < len(name) <= 63 and _NAME_PART_RE.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    """Label value (empty allowed): pure."""
    return value == "" or (len(value) <= 63 and _NAME_PART_RE.fullmatch(value) is not None)


# --- messages (pure) -------------------------------------------------------------


def not_subdomain(value: str, noun: str = "name") -> str:
    return f'"{value}" is not a valid {noun}: {SUBDOMAIN_HINT}'


def not_label(value: str, noun: str = "name") -> str:
    return f'"{value}" is not a valid {noun}: {LABEL_HINT}'


def not_qualified_name(value: str, noun: str = "name") -> str:
    return f'"{value}" is not a valid {noun}: {QUALIFIED_NAME_HINT}'


def not_label_value(value: str) -> str:
    return f'"{value}" is not a valid label value: {LABEL_VALUE_HINT}'


def unsupported(value: object, allowed: Sequence[str]) -> str:
    """FMT-ENUM: pure."""
    return f'unsupported value "{value}": use one of {", ".join(allowed)}'


def too_many(count: int, limit: int) -> str:
    """FMT-MAX: pure."""
    return f"has {count} items; at most {limit} are allowed"


def too_few(limit: int) -> str:
    """FMT-MIN: pure."""
    return f"must list at least {limit} item(s)"


def required(hint: str = "") -> str:
    """FMT-REQ: pure."""
    return f"required: {hint}" if hint else "required"


def duplicate_key(key: str, value: object, item: str | None = None) -> str:
    """FMT-DUPKEY: pure."""
    return f'duplicate {key} "{value}": each {item or key} may appear only once in this list'


def immutable(old: object, condition: str = "") -> str:
    """FMT-IMM: pure."""
    return f'is immutable{condition}; it was "{render_value(old)}"'


def negative(value: object) -> str:
    """FMT-NN: pure."""
    return f"must be greater than or equal to 0, got {render_value(value)}"


def not_quantity(value: object) -> str:
    """FMT-QTY: pure."""
    return f'"{render_value(value)}" is not a valid quantity (examples: 9, 500m, 36Gi)'


def render_value(value: object) -> str:
    """The value as the user wrote it (YAML scalars), for messages: pure."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- quantities --------------------------------------------------------------------


def parse_quantity(value: object) -> Quantity | None:
    """The quantity, or None when ``value`` is not one (never raises): pure."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        return Quantity.parse(value)
    except (QuantityError, ValueError, OverflowError):
        return None


def check_quantity(
    value: object, path: FieldPath, errors: list[FieldError], *, rule: str, origin: Origin = "S"
) -> Quantity | None:
    """Parse a present, shape-checked quantity; report FMT-QTY when it does not parse.

    Returns None for absent, INVALID (already reported) and unparsable values.
    """
    if value is None or not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    quantity = parse_quantity(value)
    if quantity is None:
        errors.append(error(path, not_quantity(value), origin=origin, rule=rule))
    return quantity


# --- generic checks that append to a list ---------------------------------------


def check_enum(
    value: object,
    allowed: Sequence[str],
    path: FieldPath,
    errors: list[FieldError],
    *,
    rule: str,
    origin: Origin = "S",
    suffix: str = "",
) -> None:
    """FMT-ENUM for a present string value (INVALID and absent are skipped)."""
    if isinstance(value, str) and value not in allowed:
        errors.append(error(path, unsupported(value, allowed) + suffix, origin=origin, rule=rule))


def check_max(
    items: object,
    limit: int,
    path: FieldPath,
    errors: list[FieldError],
    *,
    rule: str,
    origin: Origin = "S",
) -> None:
    """FMT-MAX for a list or map."""
    if isinstance(items, (list, dict)) and len(items) > limit:
        errors.append(error(path, too_many(len(items), limit), origin=origin, rule=rule))


def strings(items: object) -> list[tuple[int, str]]:
    """(index, value) of the string items of a cleaned list: pure."""
    if not isinstance(items, list):
        return []
    return [(position, item) for position, item in enumerate(items) if isinstance(item, str)]


def mappings(items: object) -> list[tuple[int, dict[str, Any]]]:
    """(index, item) of the object items of a cleaned list: pure."""
    if not isinstance(items, list):
        return []
    return [(position, item) for position, item in enumerate(items) if isinstance(item, dict)]


def as_dict(value: object) -> dict[str, Any]:
    """A cleaned object, or {} for absent/INVALID: pure."""
    return value if isinstance(value, dict) else {}


# --- labels, annotations and selectors ------------------------------------------


def check_label_map(
    labels: object,
    path: FieldPath,
    errors: list[FieldError],
    *,
    rule: str,
    origin: Origin = "W",
    keyed_paths: bool = True,
    with_key_in_value_message: bool = False,
) -> None:
    """Keys FMT-QN, values FMT-LV (FMT-SEL matchLabels, RF-2, WL-13, WL-39)."""
    if not isinstance(labels, dict):
        return
    for key, value in labels.items():
        at = path.key(key) if keyed_paths else path
        if not is_qualified_name(key):
            errors.append(
                error(
                    at,
                    f'invalid label key "{key}": {QUALIFIED_NAME_HINT}',
                    origin=origin,
                    rule=rule,
                )
            )
        if isinstance(value, str) and not is_label_value(value):
            for_key = f' for key "{key}"' if with_key_in_value_message else ""
            errors.append(
                error(
                    at,
                    f'invalid label value "{value}"{for_key}: {LABEL_VALUE_HINT}',
                    origin=origin,
                    rule=rule,
                )
            )


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def check_selector(
    selector: object, path: FieldPath, errors: list[FieldError], *, rule: str, origin: Origin = "W"
) -> None:
    """FMT-SEL on a cleaned label selector."""
    if not isinstance(selector, dict):
        return
    check_label_map(
        selector.get("matchLabels"),
        path.child("matchLabels"),
        errors,
        rule=rule,
        origin=origin,
        keyed_paths=False,
    )
    for position, expression in mappings(selector.get("matchExpressions")):
        at = path.child("matchExpressions").index(position)
        key = expression.get("key")
        if key is None:
            errors.append(
                error(at.child("key"), required("give the label key"), origin=origin, rule=rule)
            )
        elif isinstance(key, str) and not is_qualified_name(key):
            errors.append(error(at.child("key"), not_qualified_name(key), origin=origin, rule=rule))
        operator = expression.get("operator")
        values = expression.get("values")
        if operator is None:
            errors.append(
                error(
                    at.child("operator"),
                    required("use In, NotIn, Exists or DoesNotExist"),
                    origin=origin,
                    rule=rule,
                )
            )
        elif isinstance(operator, str) and operator not in SELECTOR_OPERATORS:
            errors.append(
                error(
                    at.child("operator"),
                    f'"{operator}" is not a valid operator: use In, NotIn, Exists or DoesNotExist',
                    origin=origin,
                    rule=rule,
                )
            )
        elif operator in ("In", "NotIn") and (values is None or values == []):
            errors.append(
                error(
                    at.child("values"),
                    f"must list at least one value when operator is {operator}",
                    origin=origin,
                    rule=rule,
                )
            )
        elif operator in ("Exists", "DoesNotExist") and isinstance(values, list) and values:
            errors.append(
                error(
                    at.child("values"),
                    f"must be empty when operator is {operator}",
                    origin=origin,
                    rule=rule,
                )
            )
        for value_index, value in strings(values):
            if not is_label_value(value):
                errors.append(
                    error(
                        at.child("values").index(value_index),
                        f'invalid label value "{value}": {LABEL_VALUE_HINT}',
                        origin=origin,
                        rule=rule,
                    )
                )


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Does a (valid, cleaned) label selector match these labels?  ``{}`` matches all: pure."""
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, dict):
        for key, value in match_labels.items():
            if labels.get(key) != value:
                return False
    for _, expression in mappings(selector.get("matchExpressions")):
        key, operator = expression.get("key"), expression.get("operator")
        values = [value for _, value in strings(expression.get("values"))]
        label = labels.get(key) if isinstance(key, str) else None
        present = label is not None
        if operator == "In" and not (present and label in values):
            return False
        if operator == "NotIn" and present and label in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


# --- object metadata ----------------------------------------------------------------


def check_metadata(
    obj: Mapping[str, Any],
    errors: list[FieldError],
    *,
    namespaced: bool,
    name_rule: str = "META-NAME",
) -> None:
    """``metadata.name`` required and FMT-SUB, namespace FMT-LBL (origin A).

    kuota decision: an object with ``generateName`` and no name is accepted
    (the API server picks the name before any webhook sees it).
    """
    if obj.get("metadata") is not None and not isinstance(obj.get("metadata"), dict):
        return  # wrong type, already reported by the shape pass
    metadata = as_dict(obj.get("metadata"))
    path = FieldPath(("metadata",))
    name = metadata.get("name")
    if name is None or name == "":
        if not isinstance(metadata.get("generateName"), str) or not metadata.get("generateName"):
            errors.append(
                error(
                    path.child("name"),
                    required("give the object a name"),
                    origin="A",
                    rule=name_rule,
                )
            )
    elif isinstance(name, str) and not is_subdomain(name):
        errors.append(error(path.child("name"), not_subdomain(name), origin="A", rule=name_rule))
    if namespaced:
        namespace = metadata.get("namespace")
        if isinstance(namespace, str) and namespace != "" and not is_label(namespace):
            errors.append(
                error(
                    path.child("namespace"),
                    not_label(namespace, "namespace"),
                    origin="A",
                    rule="META-NAMESPACE",
                )
            )


V = TypeVar("V")


def first_duplicates(values: Iterable[tuple[int, V]]) -> list[tuple[int, V, int]]:
    """(index, value, index of the first occurrence) for every repeated value: pure."""
    seen: dict[object, int] = {}
    repeats: list[tuple[int, V, int]] = []
    for position, value in values:
        key = value if isinstance(value, (str, int, tuple)) else repr(value)
        if key in seen:
            repeats.append((position, value, seen[key]))
        else:
            seen[key] = position
    return repeats
