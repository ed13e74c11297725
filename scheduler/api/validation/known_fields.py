"""The known fields of every kind kuota validates, with their JSON types.

This is the table behind the "unknown field" rule (a kuota decision,
docs/validation.md#order-of-processing) and behind the type checks of its
parse step.  For the
Kueue kinds it is not written here but read off each kind's ``v1beta2``
description (``scheduler/api/crds/kinds_*.py``), the same description the
CRD schemas are generated from, so the webhook and the API server cannot
disagree on what a field is:

* a string, enum, integer, boolean or quantity node is checked as such; a
  timestamp is accepted as any value (YAML loaders give time objects), and
  a node marked ``unchecked`` too (a rule checks it with its own message, or
  nobody reads it);
* a free-form object is any value, unless the description types part of it
  (``known``): then an open object, its listed fields typed and the others
  passed through (pod templates);
* ``foreign`` names fields that exist in another version of the same kind;
  they are reported with a hint that names the v1beta2 spelling;
* ``tolerated`` names are accepted with any value (a ``status`` sent to a
  kind that has none).

The Configuration's shape is read off its description the same way
(``scheduler/api/config_fields.py``); only the batch Job, which is not
kuota's to describe, is still written as a shape table here.
"""

from __future__ import annotations

from typing import Final

from scheduler.api import config_fields
from scheduler.api.crds.catalog import hub_schema
from scheduler.api.crds.nodes import FreeNode, Leaf, ListNode, MapNode, Node, ObjectNode
from scheduler.api.validation.shape import Foreign, ListOf, MapOf, Obj, Scalar, Shape

STR, INT, BOOL, NUMBER, QTY, ANY = (
    Scalar.STR,
    Scalar.INT,
    Scalar.BOOL,
    Scalar.NUMBER,
    Scalar.QTY,
    Scalar.ANY,
)
_LEAVES: Final = {
    "string": STR,
    "int32": INT,
    "int64": INT,
    "boolean": BOOL,
    "timestamp": ANY,
    "quantity": QTY,
    "number": NUMBER,
    "duration": ANY,  # Go duration text; the configuration's checks report their own message
}


def shape_of(node: Node) -> Shape:
    """Pure: the shape the webhook checks a described field against (module docstring)."""
    if node.unchecked:
        return ANY
    if isinstance(node, Leaf):
        return _LEAVES[node.type]
    if isinstance(node, ListNode):
        return ListOf(shape_of(node.item))
    if isinstance(node, MapNode):
        return MapOf(shape_of(node.values))
    if isinstance(node, FreeNode):
        return ANY if node.known is None else shape_of(node.known)
    assert isinstance(node, ObjectNode)
    fields = {name: shape_of(child) for name, child in node.properties.items()}
    fields.update({name: ANY for name in node.tolerated})
    foreign = {name: Foreign(hint.rule, hint.message) for name, hint in node.foreign.items()}
    return Obj(fields, open=node.open, foreign=foreign)


def _object(node: ObjectNode) -> Obj:
    shape = shape_of(node)
    assert isinstance(shape, Obj)
    return shape


def _kind(kind: str) -> Obj:
    return _object(hub_schema(kind))


CLUSTER_QUEUE: Final = _kind("ClusterQueue")
RESOURCE_FLAVOR: Final = _kind("ResourceFlavor")
LOCAL_QUEUE: Final = _kind("LocalQueue")
COHORT: Final = _kind("Cohort")
WORKLOAD: Final = _kind("Workload")
WORKLOAD_PRIORITY_CLASS: Final = _kind("WorkloadPriorityClass")
ADMISSION_CHECK: Final = _kind("AdmissionCheck")
MULTIKUEUE_CONFIG: Final = _kind("MultiKueueConfig")
MULTIKUEUE_CLUSTER: Final = _kind("MultiKueueCluster")
TOPOLOGY: Final = _kind("Topology")

OBJECT_META: Final = WORKLOAD.fields["metadata"]
"""The shape of ``metadata``, the same for every kind."""


def _top(spec: Shape) -> Obj:
    """A non-Kueue kind with a spec: apiVersion, kind, metadata, spec, and any status."""
    return Obj(
        {"apiVersion": STR, "kind": STR, "metadata": OBJECT_META, "spec": spec, "status": ANY}
    )


JOB: Final = _top(
    Obj({"suspend": BOOL, "parallelism": INT, "completions": INT, "completionMode": STR}, open=True)
)

CONFIGURATION: Final = _object(config_fields.CONFIGURATION)

KNOWN_FIELDS: Final[dict[str, Obj]] = {
    "ClusterQueue": CLUSTER_QUEUE,
    "ResourceFlavor": RESOURCE_FLAVOR,
    "LocalQueue": LOCAL_QUEUE,
    "Cohort": COHORT,
    "Workload": WORKLOAD,
    "WorkloadPriorityClass": WORKLOAD_PRIORITY_CLASS,
    "AdmissionCheck": ADMISSION_CHECK,
    "MultiKueueConfig": MULTIKUEUE_CONFIG,
    "MultiKueueCluster": MULTIKUEUE_CLUSTER,
    "Topology": TOPOLOGY,
    "Job": JOB,
    "Configuration": CONFIGURATION,
}
"""Shape of every kind, by ``kind``."""
