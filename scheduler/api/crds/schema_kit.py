"""Building blocks for the structural OpenAPI v3 schemas of kuota's CRDs.

Kubernetes accepts a CustomResourceDefinition only if every version carries a
*structural* schema: every node states its ``type`` (the two exceptions being
``x-kubernetes-int-or-string`` and ``x-kubernetes-preserve-unknown-fields``),
objects list their ``properties`` or give one ``additionalProperties`` schema,
arrays give one ``items`` schema, and list-map keys are scalar and either
required or defaulted.  The helpers below can only produce such nodes, so the
kind modules (``kinds_*.py``) read like the field tables of ``api.md``.

Schema validation is kept deliberately modest (types, enums, ``required``,
list-map keys, the quantity pattern, the defaults of validation.md 1.1):
kuota's own validating webhook enforces every rule of ``validation.md`` and
must be the one producing the messages users read.  No CEL rules, no name
patterns, no length or item limits.

Every function here is pure: it returns a fresh dict and never mutates its
arguments.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

Schema = dict[str, Any]
"""One node of an OpenAPI v3 schema, as it appears in the CRD YAML."""

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The Kubernetes quantity grammar (api.md 0.3), applied to string values."""


def _described(node: Schema, description: str | None) -> Schema:
    """Pure: ``node`` with ``description`` put first, when one is given."""
    if not description:
        return node
    return {"description": description, **node}


def string(description: str | None = None, *, default: str | None = None) -> Schema:
    """Pure: a plain string field."""
    node: Schema = {"type": "string"}
    if default is not None:
        node["default"] = default
    return _described(node, description)


def enum(
    values: Sequence[str],
    description: str | None = None,
    *,
    default: str | None = None,
    empty_means_default: bool = False,
) -> Schema:
    """Pure: a string restricted to ``values``.

    ``empty_means_default`` also admits ``""``: api.md 0.6 makes an explicitly
    empty defaulted enum mean "use the default", and the webhook (which only
    mutates on create) must get to see it instead of the API server rejecting
    it first.
    """
    allowed = list(values) + ([""] if empty_means_default else [])
    node: Schema = {"type": "string", "enum": allowed}
    if default is not None:
        node["default"] = default
    return _described(node, description)


def int32(description: str | None = None, *, default: int | None = None) -> Schema:
    """Pure: an ``int32`` field."""
    node: Schema = {"type": "integer", "format": "int32"}
    if default is not None:
        node["default"] = default
    return _described(node, description)


def int64(description: str | None = None) -> Schema:
    """Pure: an ``int64`` field."""
    return _described({"type": "integer", "format": "int64"}, description)


def boolean(description: str | None = None, *, default: bool | None = None) -> Schema:
    """Pure: a boolean field."""
    node: Schema = {"type": "boolean"}
    if default is not None:
        node["default"] = default
    return _described(node, description)


def timestamp(description: str | None = None) -> Schema:
    """Pure: an RFC 3339 time (``metav1.Time``)."""
    return _described({"type": "string", "format": "date-time"}, description)


def quantity(description: str | None = None, *, default: int | str | None = None) -> Schema:
    """Pure: a Kubernetes resource quantity (YAML number or string).

    The exact shape the API server requires for ``x-kubernetes-int-or-string``:
    no ``type`` beside it, ``anyOf`` integer/string, the pattern on the node.
    """
    node: Schema = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }
    if default is not None:
        node["default"] = default
    return _described(node, description)


def obj(
    properties: dict[str, Schema],
    description: str | None = None,
    *,
    required: Sequence[str] = (),
    default: dict[str, Any] | None = None,
    atomic: bool = False,
) -> Schema:
    """Pure: an object with known fields (unknown fields are pruned)."""
    missing = [name for name in required if name not in properties]
    if missing:
        raise ValueError(f"required fields {missing} are not properties")
    node: Schema = {"type": "object"}
    if default is not None:
        node["default"] = copy.deepcopy(default)
    node["properties"] = {name: copy.deepcopy(schema) for name, schema in properties.items()}
    if required:
        node["required"] = list(required)
    if atomic:
        node["x-kubernetes-map-type"] = "atomic"
    return _described(node, description)


def string_map(description: str | None = None, *, values: Schema | None = None) -> Schema:
    """Pure: ``map[string]V`` (V a string unless ``values`` says otherwise)."""
    value_schema = copy.deepcopy(values) if values is not None else {"type": "string"}
    return _described({"type": "object", "additionalProperties": value_schema}, description)


def quantity_map(description: str | None = None) -> Schema:
    """Pure: ``map[resourceName]Quantity``."""
    return string_map(description, values=quantity())


def free_form(description: str | None = None) -> Schema:
    """Pure: an object kept verbatim (pod templates, topology data kuota ignores)."""
    return _described({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, description)


def array(items: Schema, description: str | None = None) -> Schema:
    """Pure: an atomic list (replaced as a whole on merge)."""
    return _described(
        {"type": "array", "items": copy.deepcopy(items), "x-kubernetes-list-type": "atomic"},
        description,
    )


def string_set(description: str | None = None) -> Schema:
    """Pure: a list of unique strings."""
    return _described(
        {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        description,
    )


def list_map(items: Schema, keys: Sequence[str], description: str | None = None) -> Schema:
    """Pure: a list treated as a map keyed by ``keys`` (api.md 0.1).

    The API server requires every key to be a scalar property that is either
    required or defaulted; checked here so a wrong table fails at generation.
    """
    properties = items.get("properties", {})
    required = set(items.get("required", []))
    for key in keys:
        key_schema = properties.get(key)
        if key_schema is None or key_schema.get("type") not in ("string", "integer", "boolean"):
            raise ValueError(f"list-map key {key!r} must be a scalar property")
        if key not in required and "default" not in key_schema:
            raise ValueError(f"list-map key {key!r} must be required or defaulted")
    return _described(
        {
            "type": "array",
            "items": copy.deepcopy(items),
            "x-kubernetes-list-map-keys": list(keys),
            "x-kubernetes-list-type": "map",
        },
        description,
    )


# --- shared Kubernetes and Kueue types --------------------------------------


def condition() -> Schema:
    """Pure: a standard ``metav1.Condition`` (api.md 0.5)."""
    return obj(
        {
            "type": string("Type of the condition, e.g. Active, QuotaReserved, Admitted."),
            "status": enum(["True", "False", "Unknown"]),
            "reason": string(),
            "message": string(),
            "lastTransitionTime": timestamp(),
            "observedGeneration": int64(),
        },
        required=["type", "status"],
    )


def conditions(description: str | None = None) -> Schema:
    """Pure: ``status.conditions``, a list-map keyed by ``type``."""
    return list_map(condition(), ["type"], description or "Conditions, keyed by type.")


def label_selector(description: str | None = None) -> Schema:
    """Pure: a ``metav1.LabelSelector`` (api.md 0.4); operators checked by the webhook."""
    requirement = obj(
        {
            "key": string(),
            "operator": string("In, NotIn, Exists or DoesNotExist."),
            "values": array({"type": "string"}),
        },
        required=["key", "operator"],
    )
    return obj(
        {
            "matchExpressions": array(requirement),
            "matchLabels": string_map(),
        },
        description,
        atomic=True,
    )


def taint() -> Schema:
    """Pure: a node taint (api.md 3.1); effect values checked by the webhook."""
    return obj(
        {
            "key": string(),
            "value": string(),
            "effect": string("NoSchedule, PreferNoSchedule or NoExecute."),
            "timeAdded": timestamp(),
        },
        required=["key", "effect"],
    )


def toleration() -> Schema:
    """Pure: a pod toleration; operator/effect values checked by the webhook."""
    return obj(
        {
            "key": string(),
            "operator": string("Equal (default) or Exists."),
            "value": string(),
            "effect": string("NoSchedule, PreferNoSchedule, NoExecute or empty."),
            "tolerationSeconds": int64(),
        }
    )


STOP_POLICY = ["None", "Hold", "HoldAndDrain"]
QUEUEING_STRATEGY = ["StrictFIFO", "BestEffortFIFO"]


def stop_policy() -> Schema:
    """Pure: the defaulted ``stopPolicy`` enum (api.md 2.7)."""
    return enum(
        STOP_POLICY,
        "None, Hold (no new admissions) or HoldAndDrain (also evict admitted workloads).",
        default="None",
        empty_means_default=True,
    )


def fair_sharing() -> Schema:
    """Pure: spec ``fairSharing`` (api.md 2.4); weight defaults to 1 when the object exists."""
    return obj({"weight": quantity("Fair-sharing weight; 0 or above 1n.", default=1)})


def fair_sharing_status() -> Schema:
    """Pure: status ``fairSharing`` of a ClusterQueue or Cohort (api.md 2.5)."""
    return obj({"weightedShare": int64()}, required=["weightedShare"])


def resource_groups() -> Schema:
    """Pure: ``resourceGroups`` shared by ClusterQueue and Cohort (api.md 2.1–2.3)."""
    resource_quota = obj(
        {
            "name": string("Resource name; equals the covered resource at this position."),
            "nominalQuota": quantity("Quota owned for this flavor and resource."),
            "borrowingLimit": quantity("Most that may be borrowed above nominalQuota."),
            "lendingLimit": quantity("Most of the unused nominal quota that may be lent."),
        },
        required=["name", "nominalQuota"],
    )
    flavor_quotas = obj(
        {
            "name": string("Name of a ResourceFlavor."),
            "resources": list_map(resource_quota, ["name"]),
        },
        required=["name", "resources"],
    )
    group = obj(
        {
            "coveredResources": array({"type": "string"}, "Resources this group gives quota for."),
            "flavors": list_map(flavor_quotas, ["name"], "Flavors in the order they are tried."),
        },
        required=["coveredResources", "flavors"],
    )
    return array(group, "Quota by resource group, flavor and resource.")


def flavor_usage(with_borrowed: bool = True) -> Schema:
    """Pure: ``[]FlavorUsage`` of a status (api.md 2.6; LocalQueue has no ``borrowed``)."""
    resource_fields: dict[str, Schema] = {"name": string(), "total": quantity()}
    if with_borrowed:
        resource_fields["borrowed"] = quantity()
    usage = obj(
        {
            "name": string("Flavor name."),
            "resources": list_map(obj(resource_fields, required=["name"]), ["name"]),
        },
        required=["name", "resources"],
    )
    return list_map(usage, ["name"])


def top_level(
    fields: dict[str, Schema], description: str, *, required: Sequence[str] = ()
) -> Schema:
    """Pure: the root schema of one CRD version.

    ``apiVersion``/``kind`` are strings and ``metadata`` is exactly
    ``{type: object}``: the API server validates object metadata itself and
    forbids anything but name/generateName constraints there.
    """
    properties: dict[str, Schema] = {
        "apiVersion": string(),
        "kind": string(),
        "metadata": {"type": "object"},
    }
    properties.update(fields)
    return obj(properties, description, required=required)
