"""Building blocks of the kind descriptions: field helpers and the shared types.

Kubernetes accepts a CustomResourceDefinition only if every version carries a
*structural* schema: every node states its ``type`` (the two exceptions being
``x-kubernetes-int-or-string`` and ``x-kubernetes-preserve-unknown-fields``),
objects list their ``properties`` or give one ``additionalProperties`` schema,
arrays give one ``items`` schema, and list-map keys are scalar and either
required or defaulted.  The helpers below can only produce such nodes, so the
kind modules (``kinds_*.py``) read like field tables.

Schema validation is kept deliberately modest (types, enums, ``required``,
list-map keys, the quantity pattern, the defaults of docs/validation.md#defaulting):
kuota's own validating webhook enforces every rule (docs/validation.md) and
must be the one producing the messages users read.  No CEL rules, no name
patterns, no length or item limits.

Each helper returns a node (``nodes.py``): the one description the CRD
schema, the webhook's known fields and the models are all read from.  Every
function here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api.crds.nodes import (
    QUANTITY_PATTERN,
    FreeNode,
    Hint,
    Leaf,
    ListNode,
    MapNode,
    Node,
    ObjectNode,
    Schema,
    unchecked,
    unread,
)
from scheduler.api.refs import QUEUEING_STRATEGIES, STOP_POLICIES

__all__ = ["QUANTITY_PATTERN", "Schema", "unchecked", "unread"]


def string(description: str | None = None, *, default: str | None = None) -> Leaf:
    """Pure: a plain string field."""
    return Leaf(type="string", description=description, default=default)


def enum(
    values: Sequence[str],
    description: str | None = None,
    *,
    default: str | None = None,
    empty_means_default: bool = False,
) -> Leaf:
    """Pure: a string restricted to ``values`` (``empty_means_default``: see :class:`Leaf`)."""
    return Leaf(
        type="string",
        values=tuple(values),
        description=description,
        default=default,
        empty_means_default=empty_means_default,
    )


def int32(description: str | None = None, *, default: int | None = None) -> Leaf:
    """Pure: an ``int32`` field."""
    return Leaf(type="int32", description=description, default=default)


def int64(description: str | None = None) -> Leaf:
    """Pure: an ``int64`` field."""
    return Leaf(type="int64", description=description)


def boolean(description: str | None = None, *, default: bool | None = None) -> Leaf:
    """Pure: a boolean field."""
    return Leaf(type="boolean", description=description, default=default)


def timestamp(description: str | None = None) -> Leaf:
    """Pure: an RFC 3339 time (``metav1.Time``)."""
    return Leaf(type="timestamp", description=description)


def quantity(description: str | None = None, *, default: int | str | None = None) -> Leaf:
    """Pure: a Kubernetes resource quantity (YAML number or string)."""
    return Leaf(type="quantity", description=description, default=default)


def obj(
    properties: Mapping[str, Node],
    description: str | None = None,
    *,
    required: Sequence[str] = (),
    default: dict[str, Any] | None = None,
    atomic: bool = False,
    foreign: Mapping[str, Hint] | None = None,
    opaque: bool = False,
    tolerated: Sequence[str] = (),
) -> ObjectNode:
    """Pure: an object with known fields (unknown fields are pruned; see :class:`ObjectNode`)."""
    return ObjectNode(
        properties=dict(properties),
        description=description,
        required=tuple(required),
        default=default,
        atomic=atomic,
        foreign=dict(foreign or {}),
        opaque=opaque,
        tolerated=tuple(tolerated),
    )


def known(properties: Mapping[str, Node]) -> ObjectNode:
    """Pure: the typed part of a free-form object; other fields pass unchecked."""
    return ObjectNode(properties=dict(properties), open=True)


def string_map(description: str | None = None, *, values: Node | None = None) -> MapNode:
    """Pure: ``map[string]V`` (V a string unless ``values`` says otherwise)."""
    return MapNode(values=values if values is not None else string(), description=description)


def quantity_map(description: str | None = None) -> MapNode:
    """Pure: ``map[resourceName]Quantity``."""
    return string_map(description, values=quantity())


def free_form(description: str | None = None, *, typed: ObjectNode | None = None) -> FreeNode:
    """Pure: an object kept verbatim; ``typed`` lists what the webhook checks inside it."""
    return FreeNode(description=description, known=typed)


def array(items: Node, description: str | None = None) -> ListNode:
    """Pure: an atomic list (replaced as a whole on merge)."""
    return ListNode(item=items, description=description)


def string_set(description: str | None = None) -> ListNode:
    """Pure: a list of unique strings."""
    return ListNode(item=string(), list_type="set", description=description)


def list_map(items: Node, keys: Sequence[str], description: str | None = None) -> ListNode:
    """Pure: a list treated as a map keyed by ``keys`` (docs/validation.md#field-formats)."""
    return ListNode(item=items, list_type="map", keys=tuple(keys), description=description)


def hint(rule: str, message: str) -> Hint:
    """Pure: the webhook's answer to a field that belongs to another API version."""
    return Hint(rule, message)


def renamed(name: str, old_versions: str, new_path: str) -> Hint:
    """Pure: the hint for a field that ``old_versions`` spelled ``name``."""
    return Hint(
        "UNKNOWN-FIELD",
        f'unknown field "{name}"; this is the {old_versions} name; v1beta2 uses {new_path}',
    )


# --- shared Kubernetes and Kueue types --------------------------------------


def object_meta() -> ObjectNode:
    """Pure: ``metadata``; the schema says only ``{type: object}`` (the API server owns it)."""
    owner_reference = obj(
        {
            "apiVersion": string(),
            "kind": string(),
            "name": string(),
            "uid": string(),
            "controller": boolean(),
            "blockOwnerDeletion": boolean(),
        }
    )
    return obj(
        {
            "name": string(),
            "generateName": string(),
            "namespace": string(),
            "selfLink": unread(string()),
            "uid": string(),
            "resourceVersion": string(),
            "generation": int64(),
            "creationTimestamp": timestamp(),
            "deletionTimestamp": timestamp(),
            "deletionGracePeriodSeconds": unread(int64()),
            "labels": string_map(),
            "annotations": string_map(),
            "ownerReferences": array(unchecked(owner_reference)),
            "finalizers": array(string()),
            "managedFields": unread(array(free_form())),
        },
        opaque=True,
    )


def condition() -> ObjectNode:
    """Pure: a standard ``metav1.Condition`` (docs/validation.md#field-formats)."""
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


def conditions(description: str | None = None) -> ListNode:
    """Pure: ``status.conditions``, a list-map keyed by ``type``."""
    return list_map(condition(), ["type"], description or "Conditions, keyed by type.")


def label_selector(
    description: str | None = None, *, operators: Sequence[str] | None = None
) -> ObjectNode:
    """Pure: a ``metav1.LabelSelector``; operators checked by the webhook.

    ``operators`` makes the operator an enum (the chart's schema lists them);
    the CRDs keep it a plain string.
    """
    operator_description = "In, NotIn, Exists or DoesNotExist."
    requirement = obj(
        {
            "key": string(),
            "operator": string(operator_description)
            if operators is None
            else enum(operators, operator_description),
            "values": array(string()),
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


def taint() -> ObjectNode:
    """Pure: a node taint; effect values checked by the webhook."""
    return obj(
        {
            "key": string(),
            "value": string(),
            "effect": string("NoSchedule, PreferNoSchedule or NoExecute."),
            "timeAdded": timestamp(),
        },
        required=["key", "effect"],
    )


def toleration() -> ObjectNode:
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


STOP_POLICY = list(STOP_POLICIES)
QUEUEING_STRATEGY = list(QUEUEING_STRATEGIES)


def stop_policy() -> Leaf:
    """Pure: the defaulted ``stopPolicy`` enum (docs/concepts.md#stop-policies)."""
    return enum(
        STOP_POLICY,
        "None, Hold (no new admissions) or HoldAndDrain (also evict admitted workloads).",
        default="None",
        empty_means_default=True,
    )


def fair_sharing() -> ObjectNode:
    """Pure: spec ``fairSharing``; weight defaults to 1 when the object exists."""
    return obj({"weight": quantity("Fair-sharing weight; 0 or above 1n.", default=1)})


def fair_sharing_status() -> ObjectNode:
    """Pure: status ``fairSharing`` of a ClusterQueue or Cohort."""
    return obj({"weightedShare": int64()}, required=["weightedShare"])


def resource_groups() -> ListNode:
    """Pure: ``resourceGroups`` shared by ClusterQueue and Cohort.

    See docs/concepts.md#resource-groups.
    """
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
            "coveredResources": array(string(), "Resources this group gives quota for."),
            "flavors": list_map(flavor_quotas, ["name"], "Flavors in the order they are tried."),
        },
        required=["coveredResources", "flavors"],
    )
    return array(group, "Quota by resource group, flavor and resource.")


def flavor_usage(with_borrowed: bool = True) -> ListNode:
    """Pure: ``[]FlavorUsage`` of a status (LocalQueue has no ``borrowed``)."""
    resource_fields: dict[str, Node] = {"name": string(), "total": quantity()}
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
    fields: Mapping[str, Node],
    description: str,
    *,
    required: Sequence[str] = (),
    foreign: Mapping[str, Hint] | None = None,
    checked_status: bool = False,
) -> ObjectNode:
    """Pure: the root of one kind in one version.

    ``apiVersion``/``kind`` are strings and ``metadata`` is exactly
    ``{type: object}`` in the schema: the API server validates object
    metadata itself and forbids anything but name/generateName constraints
    there.  The webhook reviews a kind's ``status`` only when
    ``checked_status`` (the Workload's); every other status, and one sent to
    a kind with a spec but no status, passes its shape pass unchecked, so a
    manifest copied from ``kubectl get -o yaml`` is not refused for it.
    """
    properties: dict[str, Node] = {
        "apiVersion": string(),
        "kind": string(),
        "metadata": object_meta(),
    }
    properties.update(fields)
    status = properties.get("status")
    if status is not None and not checked_status:
        properties["status"] = unchecked(status)
    tolerated = ("status",) if "spec" in properties and status is None else ()
    return obj(properties, description, required=required, foreign=foreign, tolerated=tolerated)
