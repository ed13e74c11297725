"""The parser of every kind, derived from its description and its model, and checking both.

A kind's fields are described once (``scheduler/api/crds/kinds_*.py``); its
model (``scheduler.api.models``) is a frozen dataclass tree the type checker
can see.  :func:`bind` pairs the two, dataclass by dataclass: the model field
``queue_name`` with the node ``queueName`` (a field may name another place
with ``read_from``), and returns the function that reads that dataclass out
of a raw map.  Binding refuses, with the dataclass and the field named, when
the two disagree:

* a model field without a node at its place, or a node the model does not
  keep without being marked ``unread`` in the description;
* a type mismatch (a ``str`` bound to an integer node, a ``Literal`` whose
  values are not the enum's, a dataclass bound to a list, ...);
* a schema default the model's default contradicts.

The kind parsers are bound when ``scheduler.api.parse`` is imported, so a
field added to a description and not to the model (or the reverse) fails
every process at start, and the test suite at collection.

How a field is read follows from the pair (see :func:`_reader`): absent,
``null`` and, for strings, ``""`` give the model's default (an empty
defaulted enum means the default, as in Kueue); a ``tuple[str, ...]`` bound to a
list of ``{name}`` objects keeps the names; a dataclass bound to a free-form
node is read by the custom builder given for it (the pod template).  Type
errors go to the ``Reader`` (origin ``S``) and the field keeps its default.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, TypeGuard

from scheduler.api.crds.nodes import FreeNode, Leaf, ListNode, MapNode, Node, ObjectNode
from scheduler.api.field import FieldPath
from scheduler.api.models.common import KEEPS_EMPTY_KEY, READ_FROM_KEY, frozen_map
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity

Raw = Mapping[str, Any]
Build = Callable[[Reader, Raw, FieldPath], Any]
"""Reads one dataclass out of a raw map found at a path (errors go to the reader)."""
Read = Callable[[Reader, Raw, FieldPath], Any]
"""Reads one field out of the raw map of the dataclass that holds it."""

EMPTY: Raw = {}
IDENTITY_FIELDS = ("kind", "api_version")
"""Fields of a kind's root model fixed by its class (``parse_object`` dispatches on them)."""
_NO_DEFAULT = object()


class BindingError(TypeError):
    """A model and the description of the same object disagree."""


@dataclasses.dataclass(frozen=True)
class _Type:
    """A model field's annotation, unwrapped: ``base`` is a class, ``Any`` or ``tuple``."""

    base: Any
    optional: bool = False
    literal: tuple[str, ...] = ()
    args: tuple[Any, ...] = ()


def _unwrap(annotation: Any) -> _Type:
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        present = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        optional = len(present) < len(typing.get_args(annotation))
        if len(present) != 1:
            raise BindingError(f"unsupported union {annotation}")
        annotation = present[0]
        origin = typing.get_origin(annotation)
    while hasattr(annotation, "__supertype__"):  # a NewType
        annotation = annotation.__supertype__
    if origin is typing.Literal:
        return _Type(str, optional, literal=typing.get_args(annotation))
    if origin is tuple:
        return _Type(tuple, optional, args=typing.get_args(annotation)[:1])
    if origin is Mapping or origin is dict:
        return _Type(Mapping, optional, args=typing.get_args(annotation))
    return _Type(annotation, optional)


def _is_model(base: Any) -> TypeGuard[type]:
    return isinstance(base, type) and dataclasses.is_dataclass(base)


def _base_of(annotation: Any) -> Any:
    return _unwrap(annotation).base


def _default(model_field: dataclasses.Field[Any]) -> Any:
    if model_field.default is not dataclasses.MISSING:
        return model_field.default
    if model_field.default_factory is not dataclasses.MISSING:
        return model_field.default_factory()
    return _NO_DEFAULT


def _leaf_reader(key: str, kind: _Type, node: Leaf, default: Any, keeps_empty: bool) -> Read:
    base = kind.base
    if base is str and node.type == "string":
        if kind.literal and set(kind.literal) != set(node.values or ()):
            raise BindingError(f"values {kind.literal} are not the enum's {node.values}")
        fallback = "" if default is _NO_DEFAULT else default

        def text(reader: Reader, raw: Raw, path: FieldPath) -> Any:
            value = reader.string(raw, key, path)
            if keeps_empty:
                return fallback if value is None else value
            return value if value else fallback

        return text
    if default is _NO_DEFAULT:
        raise BindingError("needs a default (the value when the manifest has none)")
    if base is int and node.type in ("int32", "int64"):
        bits = 32 if node.type == "int32" else 64

        def integer(reader: Reader, raw: Raw, path: FieldPath) -> Any:
            value = reader.integer(raw, key, path, bits=bits)
            return default if value is None else value

        return integer
    if base is timedelta and node.type == "duration":

        def duration(reader: Reader, raw: Raw, path: FieldPath) -> Any:
            value = reader.duration(raw, key, path)
            # A zero duration where the model has a default reads as that default.
            return default if value is None or (not value and default is not None) else value

        return duration
    getters: dict[tuple[Any, str], Callable[[Reader, Raw, str, FieldPath], Any]] = {
        (bool, "boolean"): Reader.boolean,
        (Quantity, "quantity"): Reader.quantity,
        (datetime, "timestamp"): Reader.timestamp,
    }
    getter = getters.get((base, node.type))
    if getter is None:
        raise BindingError(f"a {node.type} node cannot be read into {base}")

    def scalar(reader: Reader, raw: Raw, path: FieldPath) -> Any:
        value = getter(reader, raw, key, path)
        return default if value is None else value

    return scalar


def _check_default(node: Node, kind: _Type, default: Any) -> None:
    """A schema default must be the model's default (absent and defaulted read the same)."""
    if isinstance(node, Leaf) and node.default is not None:
        expected = Quantity.parse(node.default) if node.type == "quantity" else node.default
        if default != expected:
            raise BindingError(f"the schema defaults to {node.default!r}, the model to {default!r}")
    if isinstance(node, ObjectNode) and node.default is not None and kind.optional:
        raise BindingError("the schema defaults the object, the model makes it optional")


def _list_reader(
    key: str, kind: _Type, node: ListNode, default: Any, custom: Mapping[type, Build]
) -> Read:
    """A list; an empty one reads as the model's default (a default list of frameworks)."""
    read = _items_reader(key, kind, node, custom)
    if not default or default is _NO_DEFAULT:
        return read
    return lambda reader, raw, path: read(reader, raw, path) or default


def _items_reader(key: str, kind: _Type, node: ListNode, custom: Mapping[type, Build]) -> Read:
    (item_type,) = kind.args
    item = _unwrap(item_type)
    if item.base is str and isinstance(node.item, Leaf) and node.item.type == "string":
        if item.literal and set(item.literal) != set(node.item.values or ()):
            raise BindingError(f"values {item.literal} are not the enum's {node.item.values}")
        return lambda reader, raw, path: reader.strings(raw, key, path)
    if item.base is str and isinstance(node.item, ObjectNode) and "name" in node.item.properties:
        # A list of {name: ...} objects the model keeps as the names alone.
        return lambda reader, raw, path: reader.objects(
            raw, key, path, lambda i, p: reader.text(i, "name", p)
        )
    if _is_model(item.base) and isinstance(node.item, ObjectNode):
        build = bind(item.base, node.item, custom=custom)
        return lambda reader, raw, path: reader.objects(
            raw, key, path, lambda i, p: build(reader, i, p)
        )
    if item.base is Any and isinstance(node.item, FreeNode):
        return lambda reader, raw, path: tuple(item for item, _ in reader.items(raw, key, path))
    raise BindingError(f"a list of {type(node.item).__name__} cannot be read into {kind.args}")


def _map_reader(key: str, kind: _Type, node: MapNode) -> Read:
    value_base = _base_of(kind.args[1]) if kind.args else None
    if value_base is str and isinstance(node.values, Leaf) and node.values.type == "string":
        return lambda reader, raw, path: frozen_map(reader.string_map(raw, key, path))
    if value_base is Quantity and isinstance(node.values, Leaf) and node.values.type == "quantity":
        return lambda reader, raw, path: frozen_map(reader.quantity_map(raw, key, path))
    if value_base is bool and isinstance(node.values, Leaf) and node.values.type == "boolean":
        return lambda reader, raw, path: frozen_map(reader.boolean_map(raw, key, path))
    if value_base is float and isinstance(node.values, Leaf) and node.values.type == "number":
        return lambda reader, raw, path: frozen_map(reader.number_map(raw, key, path))
    raise BindingError(f"a map of {type(node.values).__name__} cannot be read into {kind.args}")


def _object_reader(key: str, kind: _Type, build: Build) -> Read:
    if kind.optional:

        def optional(reader: Reader, raw: Raw, path: FieldPath) -> Any:
            found = reader.object(raw, key, path)
            return None if found is None else build(reader, found, path.child(key))

        return optional
    return lambda reader, raw, path: build(
        reader, reader.object(raw, key, path) or EMPTY, path.child(key)
    )


def _reader(
    key: str,
    kind: _Type,
    node: Node,
    model_field: dataclasses.Field[Any],
    custom: Mapping[type, Build],
) -> Read:
    """How one model field is read from its node (module docstring)."""
    default = _default(model_field)
    _check_default(node, kind, default)
    if isinstance(node, Leaf):
        keeps_empty = bool(model_field.metadata.get(KEEPS_EMPTY_KEY))
        return _leaf_reader(key, kind, node, default, keeps_empty)
    if kind.base is tuple and isinstance(node, ListNode):
        return _list_reader(key, kind, node, default, custom)
    if kind.base is Mapping and isinstance(node, MapNode):
        return _map_reader(key, kind, node)
    if kind.base is Mapping and isinstance(node, FreeNode) and kind.optional:

        def free(reader: Reader, raw: Raw, path: FieldPath) -> Any:
            found = reader.object(raw, key, path)
            return None if found is None else frozen_map(found)

        return free
    if _is_model(kind.base):
        if isinstance(node, ObjectNode):
            return _object_reader(key, kind, bind(kind.base, node, custom=custom))
        if isinstance(node, FreeNode) and kind.base in custom:
            return _object_reader(key, kind, custom[kind.base])
    raise BindingError(f"a {type(node).__name__} cannot be read into {kind.base}")


Fill = Callable[[Reader, Raw, FieldPath, dict[str, Any]], None]
"""Reads some fields of a dataclass into its keyword arguments."""


def _fill(entries: list[tuple[str, tuple[str, ...], Read, Any]]) -> Fill:
    """Reads ``(field, path, read, default)`` entries in order; fields kept below objects
    the model flattens away (``read_from``) are grouped, so each object is read once.
    """
    steps: list[tuple[str, Read | None]] = []  # (field, read) or (object key, None)
    below: dict[str, list[tuple[str, tuple[str, ...], Read, Any]]] = {}
    for name, path, read, default in entries:
        if len(path) == 1:
            steps.append((name, read))
            continue
        if path[0] not in below:
            below[path[0]] = []
            steps.append((path[0], None))
        below[path[0]].append((name, path[1:], read, default))
    groups = {key: (_fill(group), [(n, d) for n, _, _, d in group]) for key, group in below.items()}

    def fill(reader: Reader, raw: Raw, path: FieldPath, values: dict[str, Any]) -> None:
        for name, read in steps:
            if read is not None:
                values[name] = read(reader, raw, path)
                continue
            inner, defaults = groups[name]
            found = reader.object(raw, name, path)
            if found is None:
                values.update(defaults)
            else:
                inner(reader, found, path.child(name), values)

    return fill


def _uncovered(node: ObjectNode, paths: list[tuple[str, ...]], root: bool) -> list[str]:
    """Pure: properties of ``node`` that no model path reads and the description keeps."""
    missing = []
    for name, child in node.properties.items():
        if not child.read or (root and name in ("kind", "apiVersion")):
            continue
        below = [path[1:] for path in paths if path[0] == name]
        if () in below:
            continue
        if below and isinstance(child, ObjectNode):
            missing += [f"{name}.{inner}" for inner in _uncovered(child, below, False)]
        else:
            missing.append(name)
    return missing


def field_reader(model: type, name: str, node: ObjectNode, *, custom: Mapping[type, Build]) -> Read:
    """The reader of the one field ``name`` of ``model``, out of maps described by ``node``.

    For a dataclass whose fields are read by hand, in an order or with
    semantics of its own (the Configuration's root), each field still
    checked against its node; raises ``BindingError``.
    """
    (model_field,) = [item for item in dataclasses.fields(model) if item.name == name]
    key = camel(name)
    where = f"{model.__name__}.{name} ({key})"
    child = node.properties.get(key)
    if child is None or not child.read:
        raise BindingError(f"{where}: the description has no such field")
    try:
        return _reader(key, _unwrap(typing.get_type_hints(model)[name]), child, model_field, custom)
    except BindingError as problem:
        raise BindingError(f"{where}: {problem}") from None


def camel(name: str) -> str:
    """Pure: the JSON spelling of a model field name (``queue_name`` → ``queueName``)."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def bind(
    model: type, node: ObjectNode, *, custom: Mapping[type, Build], root: bool = False
) -> Build:
    """The reader of ``model`` out of raw maps described by ``node``; raises ``BindingError``.

    ``custom`` gives the builders of dataclasses kept in free-form nodes;
    ``root`` skips the identity fields of a kind's root model.
    """
    hints = typing.get_type_hints(model)
    entries: list[tuple[str, tuple[str, ...], Read, Any]] = []
    paths: list[tuple[str, ...]] = []
    for model_field in dataclasses.fields(model):
        if root and model_field.name in IDENTITY_FIELDS:
            continue
        path = tuple(model_field.metadata.get(READ_FROM_KEY, (camel(model_field.name),)))
        paths.append(path)
        where = f"{model.__name__}.{model_field.name} ({'.'.join(path)})"
        here: Node = node
        for name in path:
            if not isinstance(here, ObjectNode) or name not in here.properties:
                raise BindingError(f"{where}: the description has no such field")
            here = here.properties[name]
        if not here.read:
            raise BindingError(f"{where}: the description marks the field unread")
        try:
            read = _reader(path[-1], _unwrap(hints[model_field.name]), here, model_field, custom)
        except BindingError as problem:
            raise BindingError(f"{where}: {problem}") from None
        entries.append((model_field.name, path, read, _default(model_field)))
    missing = _uncovered(node, paths, root)
    if missing:
        raise BindingError(
            f"{model.__name__} keeps no field for {', '.join(missing)}: add one, or mark the "
            "field unread in the description"
        )

    fill = _fill(entries)

    def build(reader: Reader, raw: Raw, path: FieldPath) -> Any:
        values: dict[str, Any] = {}
        fill(reader, raw, path, values)
        return model(**values)

    return build
