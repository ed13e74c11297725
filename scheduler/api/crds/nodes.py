"""The nodes each kind's fields are described with, once.

A kind is described as a tree of nodes (``kinds_*.py`` builds the trees with
the helpers of ``schema_kit``).  Three things are read off the same tree, so
they cannot disagree:

* the structural OpenAPI schema of the CRD (:meth:`Node.crd`, rendered by
  ``generate.py`` into the YAML files of this package);
* the webhook's known-field shapes (``scheduler.api.validation.known_fields``
  converts a tree into the shape table its unknown-field and type pass walks);
* the typed models (``scheduler.api.parse.binding`` binds every model
  dataclass to its node when the parser is built, and refuses to build when a
  model field and the tree disagree, so a field added here and not to the
  model, or the other way round, fails at import).

Besides what the API server sees, a node carries what the two other readers
need and the schema cannot say: ``unchecked`` (the webhook's shape pass lets
any value through: a rule of its own reports a bad one, or nothing reads the
field), ``read`` (the models do not keep the field: stored and round-tripped
only), ``foreign`` (names another API version uses at that place, answered
with a hint) and ``open``/``opaque``/``tolerated`` (parts of an object the
schema does not own).

The Configuration file (``scheduler/api/config_fields.py``) is described with
the same nodes, plus two things only it uses: ``checks`` (the value and range
rules validation applies where they are declared, see :class:`Check`) and
``chart`` (how the Helm chart offers the field as a value, :class:`ChartValue`).

Nodes are immutable; :meth:`Node.crd` returns a fresh dict each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

Schema = dict[str, Any]
"""One node of an OpenAPI v3 schema, as it appears in the CRD YAML."""

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The Kubernetes quantity grammar, applied to string values."""

LeafType = Literal[
    "string", "int32", "int64", "boolean", "timestamp", "quantity", "number", "duration"
]
ListType = Literal["atomic", "set", "map"]
N = TypeVar("N", bound="Node")


@dataclass(frozen=True)
class Cel:
    """One CEL rule of the CRD (an ``x-kubernetes-validations`` entry) and its Python twin.

    ``twin`` is the id of the Python rule that judges the same thing with the
    same words (docs/validation.md#rules-enforced-by-the-api-server): the API
    server runs the CEL rule, ``kuota validate`` the twin.  ``message`` is fixed
    text, ``message_expression`` builds it from the object (as the twin does);
    ``field_path`` points the error at the field the twin names.
    """

    twin: str
    rule: str
    message: str = ""
    message_expression: str = ""
    field_path: str = ""

    def render(self) -> Schema:
        """Pure: the entry as it appears in the CRD."""
        entry: Schema = {"rule": self.rule}
        if self.message:
            entry["message"] = self.message
        if self.message_expression:
            entry["messageExpression"] = self.message_expression
        if self.field_path:
            entry["fieldPath"] = self.field_path
        return entry


@dataclass(frozen=True)
class Hint:
    """The answer to a field of another API version (rule id and message)."""

    rule: str
    message: str


@dataclass(frozen=True)
class Check:
    """A value or range rule declared on a field; validation applies it (rule id ``rule``)."""

    rule: str


@dataclass(frozen=True)
class OneOf(Check):
    """A string is one of the leaf's enum values (``""`` too, when it means the default)."""


@dataclass(frozen=True)
class AtLeast(Check):
    """A number or duration is at least ``minimum`` (more, when ``exclusive``).

    ``message`` defaults to "must be greater than or equal to 0, got <value>".
    """

    minimum: int = 0
    exclusive: bool = False
    message: str | None = None


@dataclass(frozen=True)
class NotZero(Check):
    """A number or duration is not zero (the negative ones are left to :class:`AtLeast`)."""

    message: str = "must not be 0"


@dataclass(frozen=True)
class GoDuration(Check):
    """A duration is written as Go writes one (``30s``, ``1h30m``)."""


@dataclass(frozen=True)
class LabelValue(Check):
    """A string is a valid label value."""


@dataclass(frozen=True)
class OnlyWith(Check):
    """An object may be given only when its ``sibling`` field is ``value``."""

    sibling: str
    value: str
    message: str


@dataclass(frozen=True)
class Refused(Check):
    """kuota cannot act on the field: set to a value not ``allowed``, it is an error.

    ``message`` says what kuota does instead.  An empty value (``""``,
    ``[]``, ``{}``) is allowed unless ``even_empty``.
    """

    message: str
    allowed: tuple[object, ...] = ()
    even_empty: bool = False


@dataclass(frozen=True, kw_only=True)
class NotActedOn(Check):
    """kuota accepts the field and does not act on it: set, it gets a warning (``message``).

    Values in ``allowed`` (and empty ones) ask for nothing kuota does not do.
    """

    message: str
    allowed: tuple[object, ...] = ()
    rule: str = ""


@dataclass(frozen=True)
class OffWhenDisabled(Check):
    """No check applies inside the object while its ``enable`` is ``false`` (v1beta1)."""

    rule: str = ""


@dataclass(frozen=True, kw_only=True)
class ChartValue:
    """How the Helm chart offers a Configuration field as a value under ``config:``.

    ``doc`` is the comment above the value in ``values.yaml`` and its
    description in ``values.schema.json``; ``default`` the value there when
    not empty.  A value is rendered into the ConfigMap when set (not empty),
    or ``always``.  An object with a ``switch`` (name, doc) gets a chart-only
    boolean that renders it; ``schema`` holds JSON-schema keywords the chart
    adds (or narrows) to what the description gives; a ``free`` value is
    offered as an untyped object and passed through.
    """

    doc: str = ""
    default: Any = None
    always: bool = False
    switch: tuple[str, str] | None = None
    schema: Mapping[str, Any] = field(default_factory=dict)
    free: bool = False


@dataclass(frozen=True, kw_only=True)
class Node:
    """What every node says besides its type (see the module docstring)."""

    description: str | None = None
    unchecked: bool = False
    read: bool = True
    checks: tuple[Check, ...] = ()
    chart: ChartValue | None = None
    cel: tuple[Cel, ...] = ()

    def crd(self) -> Schema:
        """Pure: the node as it appears in the CRD's ``openAPIV3Schema``."""
        raise NotImplementedError

    def _described(self, node: Schema) -> Schema:
        if self.cel:
            node["x-kubernetes-validations"] = [rule.render() for rule in self.cel]
        if not self.description:
            return node
        return {"description": self.description, **node}


@dataclass(frozen=True, kw_only=True)
class Leaf(Node):
    """A scalar: a string (an enum when ``values`` is set), integer, boolean, time or quantity.

    ``empty_means_default`` also admits ``""`` in the schema of a defaulted
    enum: an explicitly empty value means "use the default", and the webhook
    must get to see it instead of the API server rejecting it first.
    """

    type: LeafType
    values: tuple[str, ...] | None = None
    default: str | int | bool | None = None
    empty_means_default: bool = False
    max_length: int | None = None

    def crd(self) -> Schema:
        node: Schema
        if self.type == "string":
            node = {"type": "string"}
            if self.values is not None:
                node["enum"] = list(self.values) + ([""] if self.empty_means_default else [])
            if self.max_length is not None:
                node["maxLength"] = self.max_length
        elif self.type in ("int32", "int64"):
            node = {"type": "integer", "format": self.type}
        elif self.type == "boolean":
            node = {"type": "boolean"}
        elif self.type == "timestamp":
            node = {"type": "string", "format": "date-time"}
        elif self.type == "number":
            node = {"type": "number"}
        elif self.type == "duration":
            node = {"type": "string"}
        else:
            # The exact shape the API server requires for x-kubernetes-int-or-string:
            # no ``type`` beside it, ``anyOf`` integer/string, the pattern on the node.
            node = {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "pattern": QUANTITY_PATTERN,
                "x-kubernetes-int-or-string": True,
            }
        if self.default is not None:
            node["default"] = self.default
        return self._described(node)


@dataclass(frozen=True, kw_only=True)
class ObjectNode(Node):
    """An object with known ``properties`` (the API server prunes the others).

    ``opaque``: the schema says only ``{type: object}`` (object metadata, which
    the API server validates itself); the properties are there for the
    webhook and the models.  ``open``: inside a free-form object, the listed
    fields are typed and the others kept unchecked.  ``tolerated``: names the
    webhook accepts with any value although the schema has no such field.
    """

    properties: Mapping[str, Node]
    required: tuple[str, ...] = ()
    default: Mapping[str, Any] | None = None
    atomic: bool = False
    foreign: Mapping[str, Hint] = field(default_factory=dict)
    open: bool = False
    opaque: bool = False
    tolerated: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        missing = [name for name in self.required if name not in self.properties]
        if missing:
            raise ValueError(f"required fields {missing} are not properties")

    def crd(self) -> Schema:
        if self.opaque:
            return self._described({"type": "object"})
        node: Schema = {"type": "object"}
        if self.default is not None:
            node["default"] = dict(self.default)
        node["properties"] = {name: child.crd() for name, child in self.properties.items()}
        if self.required:
            node["required"] = list(self.required)
        if self.atomic:
            node["x-kubernetes-map-type"] = "atomic"
        return self._described(node)


@dataclass(frozen=True, kw_only=True)
class MapNode(Node):
    """``map[string]V``."""

    values: Node

    def crd(self) -> Schema:
        return self._described({"type": "object", "additionalProperties": self.values.crd()})


@dataclass(frozen=True, kw_only=True)
class ListNode(Node):
    """A list: ``atomic`` (replaced as a whole), a ``set`` of strings, or a ``map`` by ``keys``.

    The API server requires every list-map key to be a scalar property that
    is required or defaulted; checked here so a wrong table fails at import.
    """

    item: Node
    list_type: ListType = "atomic"
    keys: tuple[str, ...] = ()
    max_items: int | None = None

    def __post_init__(self) -> None:
        if self.list_type != "map":
            return
        item = self.item
        properties = item.properties if isinstance(item, ObjectNode) else {}
        required = item.required if isinstance(item, ObjectNode) else ()
        for key in self.keys:
            key_node = properties.get(key)
            if not isinstance(key_node, Leaf) or key_node.type not in (
                "string",
                "int32",
                "int64",
                "boolean",
            ):
                raise ValueError(f"list-map key {key!r} must be a scalar property")
            if key not in required and key_node.default is None:
                raise ValueError(f"list-map key {key!r} must be required or defaulted")

    def crd(self) -> Schema:
        node: Schema = {"type": "array", "items": self.item.crd()}
        if self.list_type == "map":
            node["x-kubernetes-list-map-keys"] = list(self.keys)
        node["x-kubernetes-list-type"] = self.list_type
        if self.max_items is not None:
            node["maxItems"] = self.max_items
        return self._described(node)


@dataclass(frozen=True, kw_only=True)
class FreeNode(Node):
    """An object kept verbatim (pod templates, data kuota stores without reading).

    ``known``: the fields the webhook types inside it anyway (an ``open`` object).
    """

    known: ObjectNode | None = None

    def crd(self) -> Schema:
        return self._described({"type": "object", "x-kubernetes-preserve-unknown-fields": True})


def unchecked(node: N) -> N:
    """Pure: ``node``, with any value let through by the webhook's shape pass.

    For fields whose type a validation rule checks with its own message, and
    for status blocks the webhook does not review.
    """
    return replace(node, unchecked=True)


def with_cel(node: N, *rules: Cel) -> N:
    """Pure: ``node`` with CEL rules the API server applies to it."""
    return replace(node, cel=node.cel + rules)


def unread(node: N) -> N:
    """Pure: ``node``, marked as not kept by the models (stored and round-tripped only)."""
    return replace(node, read=False)


def child(node: Node, *path: str) -> Node:
    """Pure: the node at ``path`` (property names; ``[]`` steps into list items)."""
    here = node
    for name in path:
        if name == "[]" and isinstance(here, ListNode):
            here = here.item
        elif isinstance(here, ObjectNode) and name in here.properties:
            here = here.properties[name]
        elif isinstance(here, FreeNode) and here.known is not None:
            here = here.known.properties[name]
        else:
            raise KeyError(f"no field {name!r} in {'.'.join(path)}")
    return here
