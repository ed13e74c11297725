"""Test helpers for the CRD manifests: structural checks, a value checker, seeds.

``structural_problems`` re-states the apiextensions.k8s.io/v1 rules that the
API server applies when a CRD is created (structural schema, list-map keys,
metadata root, no CEL), so a broken schema fails here instead of on the first
``kubectl apply``.  ``value_problems`` walks an object through a schema the
way the API server's validation does for the parts kuota uses (types, enums,
required, unknown fields, int-or-string with its pattern, list-map and set
uniqueness).  Seed manifests come from ``tests.api.seed_examples``.

All functions are pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

Schema = dict[str, Any]

_ALLOWED_NODE_KEYS = {
    "description",
    "type",
    "format",
    "enum",
    "default",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "pattern",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "maxItems",
    "maxLength",
}
_SCALARS = {"string", "integer", "number", "boolean"}
_TYPES = _SCALARS | {"object", "array"}


# --- structural schema -------------------------------------------------------


def structural_problems(schema: Schema, path: str = "openAPIV3Schema") -> list[str]:
    """Pure: why ``schema`` (a version's root schema) is not a valid structural schema."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append(f"{path}: root must have type object")
    properties = schema.get("properties", {})
    if properties.get("metadata") != {"type": "object"}:
        problems.append(f"{path}.properties.metadata: must be exactly {{type: object}}")
    for meta in ("apiVersion", "kind"):
        if properties.get(meta, {}).get("type") != "string":
            problems.append(f"{path}.properties.{meta}: must be a string")
    _walk(schema, path, problems)
    return problems


def _walk(node: Schema, path: str, problems: list[str]) -> None:
    unknown = set(node) - _ALLOWED_NODE_KEYS
    if unknown:
        problems.append(f"{path}: keys not allowed here: {sorted(unknown)}")
    if node.get("x-kubernetes-int-or-string"):
        _check_int_or_string(node, path, problems)
    else:
        if "anyOf" in node:
            problems.append(f"{path}: anyOf is only used for int-or-string")
        node_type = node.get("type")
        if node_type not in _TYPES:
            problems.append(f"{path}: missing or unknown type {node_type!r}")
        if node_type == "object":
            _check_object(node, path, problems)
        elif node_type == "array":
            _check_array(node, path, problems)
        elif any(key in node for key in ("properties", "additionalProperties", "items")):
            problems.append(f"{path}: scalar node with object/array keywords")
        if "x-kubernetes-preserve-unknown-fields" in node and node_type != "object":
            problems.append(f"{path}: preserve-unknown-fields only on objects here")
    if "enum" in node:
        for value in node["enum"]:
            problems.extend(
                value_problems(
                    value, {k: v for k, v in node.items() if k != "enum"}, f"{path}.enum"
                )
            )
    if "default" in node:
        problems.extend(value_problems(node["default"], node, f"{path}.default"))
    if node.get("x-kubernetes-map-type") not in (None, "atomic", "granular"):
        problems.append(f"{path}: bad x-kubernetes-map-type")


def _check_int_or_string(node: Schema, path: str, problems: list[str]) -> None:
    if "type" in node:
        problems.append(f"{path}: int-or-string must not carry a type")
    if node.get("anyOf") != [{"type": "integer"}, {"type": "string"}]:
        problems.append(f"{path}: int-or-string needs anyOf [integer, string]")
    for key in ("properties", "items", "additionalProperties"):
        if key in node:
            problems.append(f"{path}: int-or-string with {key}")


def _check_object(node: Schema, path: str, problems: list[str]) -> None:
    properties = node.get("properties")
    additional = node.get("additionalProperties")
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if properties is not None and additional is not None:
        problems.append(f"{path}: properties and additionalProperties are exclusive")
    is_root_metadata = path.endswith(".properties.metadata") and path.count(".properties.") == 1
    if properties is None and additional is None and not preserve and not is_root_metadata:
        # Valid for the API server, but every field would be pruned: a mistake here.
        problems.append(f"{path}: object without properties, additionalProperties or preserve")
    for name in node.get("required", []):
        if name not in (properties or {}):
            problems.append(f"{path}: required {name!r} is not a property")
    for name, child in (properties or {}).items():
        _walk(child, f"{path}.properties.{name}", problems)
    if isinstance(additional, dict):
        _walk(additional, f"{path}.additionalProperties", problems)
    elif additional is not None:
        problems.append(f"{path}: additionalProperties must be a schema")


def _check_array(node: Schema, path: str, problems: list[str]) -> None:
    items = node.get("items")
    if not isinstance(items, dict):
        problems.append(f"{path}: array needs one items schema")
        return
    _walk(items, f"{path}.items", problems)
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type not in (None, "atomic", "set", "map"):
        problems.append(f"{path}: bad x-kubernetes-list-type {list_type!r}")
    if (list_type == "map") != bool(keys):
        problems.append(f"{path}: list-map keys iff list-type map")
    if list_type == "set" and items.get("type") not in _SCALARS:
        problems.append(f"{path}: set items must be scalar")
    if list_type == "map":
        if items.get("type") != "object":
            problems.append(f"{path}: list-map items must be objects")
        item_properties = items.get("properties", {})
        for key in keys or []:
            key_schema = item_properties.get(key)
            if key_schema is None or key_schema.get("type") not in _SCALARS:
                problems.append(f"{path}: list-map key {key!r} must be a scalar property")
            elif key not in items.get("required", []) and "default" not in key_schema:
                problems.append(f"{path}: list-map key {key!r} must be required or defaulted")


def all_nodes(node: Schema, path: str = "") -> Iterator[tuple[str, Schema]]:
    """Pure: every schema node with its dotted field path (``[]`` for list items)."""
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from all_nodes(child, f"{path}.{name}" if path else name)
    if isinstance(node.get("additionalProperties"), dict):
        yield from all_nodes(node["additionalProperties"], f"{path}{{}}")
    if isinstance(node.get("items"), dict):
        yield from all_nodes(node["items"], f"{path}[]")


def node_at(schema: Schema, dotted: str) -> Schema:
    """Pure: the node at ``spec.podSets[].name``-style path; KeyError if absent."""
    for path, node in all_nodes(schema):
        if path == dotted:
            return node
    raise KeyError(dotted)


_FILTER = re.compile(r'^\[\?\(@\.(\w+)==["\']([^"\']+)["\']\)\]')


def json_path_node(schema: Schema, json_path: str) -> Schema | None:
    """Pure: the schema node a printer-column or selectable-field path reaches.

    Understands ``.a.b`` and ``.a[?(@.type=="X")].b``; ``metadata`` paths are
    answered with the Kubernetes ObjectMeta types kuota's columns use.
    """
    if json_path.startswith(".metadata."):
        return {"type": "string", "format": "date-time"}
    node: Schema | None = schema
    rest = json_path
    while rest and node is not None:
        if rest.startswith("."):
            match = re.match(r"^\.(\w+)", rest)
            assert match, json_path
            node = node.get("properties", {}).get(match.group(1))
            rest = rest[match.end() :]
            continue
        match = _FILTER.match(rest)
        if not match or node.get("type") != "array":
            return None
        node = node["items"]
        if match.group(1) not in node.get("properties", {}):
            return None
        rest = rest[match.end() :]
    return node


# --- values ------------------------------------------------------------------


def value_problems(value: Any, schema: Schema, path: str = "") -> list[str]:
    """Pure: why ``value`` would be rejected by ``schema`` (empty list = accepted)."""
    problems: list[str] = []
    _check_value(value, schema, path or "<root>", problems)
    return problems


def _check_value(value: Any, schema: Schema, path: str, problems: list[str]) -> None:
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            problems.append(f"{path}: must be an integer or a string")
        elif isinstance(value, str) and "pattern" in schema:
            if not re.search(schema["pattern"], value):
                problems.append(f"{path}: {value!r} does not match the quantity pattern")
        return
    expected = schema.get("type")
    if not _has_type(value, expected):
        problems.append(f"{path}: expected {expected}, got {type(value).__name__}")
        return
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} not in {schema['enum']}")
    if expected == "integer" and schema.get("format") == "int32":
        if not -(2**31) <= value < 2**31:
            problems.append(f"{path}: out of int32 range")
    if expected == "object":
        _check_object_value(value, schema, path, problems)
    elif expected == "array":
        _check_array_value(value, schema, path, problems)


def _has_type(value: Any, expected: str | None) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    return expected in checks and checks[expected](value)


def _check_object_value(
    value: dict[str, Any], schema: Schema, path: str, problems: list[str]
) -> None:
    for name in schema.get("required", []):
        if name not in value:
            problems.append(f"{path}.{name}: required")
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    for name, child in value.items():
        child_path = f"{path}.{name}" if path != "<root>" else name
        if path == "<root>" and name == "metadata":
            # ObjectMeta is validated by the API server itself, not by the CRD schema.
            if not isinstance(child, dict):
                problems.append("metadata: expected object")
            continue
        if properties is not None and name in properties:
            _check_value(child, properties[name], child_path, problems)
        elif isinstance(additional, dict):
            _check_value(child, additional, f"{path}[{name}]", problems)
        elif not preserve:
            problems.append(f"{child_path}: unknown field")


def _check_array_value(value: list[Any], schema: Schema, path: str, problems: list[str]) -> None:
    for index, item in enumerate(value):
        _check_value(item, schema["items"], f"{path}[{index}]", problems)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set" and len(set(map(repr, value))) != len(value):
        problems.append(f"{path}: duplicate entries in a set")
    if list_type == "map":
        keys = schema["x-kubernetes-list-map-keys"]
        item_properties = schema["items"].get("properties", {})
        seen = set()
        for item in value:
            if not isinstance(item, dict):
                continue
            key = tuple(item.get(k, item_properties.get(k, {}).get("default")) for k in keys)
            if key in seen:
                problems.append(f"{path}: duplicate key {key}")
            seen.add(key)


# --- seeds -------------------------------------------------------------------
