"""The one reader of raw Kubernetes objects (dicts as the API server sends them).

The scheduler, the webhook, the CLI and the certificate bootstrap all receive
raw JSON, and raw JSON is untrusted: ``metadata`` may be missing or ``null``,
``labels`` may be a list, a condition may lack ``status``.  Every question
about a raw object is answered here, once, with the same tolerance: a missing
or ill-typed field reads as absent (``None``, ``""``, an empty mapping),
never as an exception.  Callers never dig with ``(x.get("metadata") or
{}).get(...)`` themselves.

The ``TypedDict`` classes describe the payloads at the boundary as far as
kuota reads them (``total=False``: the API server omits empty fields).  They
document shapes and type what a function returns; they validate nothing, so
the functions check each value they hand out.

Three rules that many modules need live here, once:

- **the key** of an object: ``namespace/name`` when namespaced, else ``name``;
- **the Job that owns a Workload**: the owner reference of kind ``Job`` in
  group ``batch``, else the ``kueue.x-k8s.io/job-uid`` label;
- **the queue name of a job**: the ``kueue.x-k8s.io/queue-name`` label, else
  (legacy) the annotation of the same key.

And the Workload state predicates (quota reserved, admitted, evicting,
finished, deactivated) that the Job controller, the queue status and the CLI
read.  Every function is pure.

(No ``from __future__ import annotations`` here: this module has a function
named ``annotations``, and Python 3.11 evaluates these hints fine.)
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypedDict, cast

from scheduler.api.refs import (
    ADMITTED,
    EVICTED,
    FINISHED,
    JOB_UID_LABEL,
    ON_HOLD,
    PREBUILT_WORKLOAD_KEY,
    QUEUE_NAME_ANNOTATION,
    QUEUE_NAME_LABEL,
    QUOTA_RESERVED,
)

RawObject = Mapping[str, Any]
"""An object as the API server (or a YAML file) gives it."""


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    finalizers: list[str]


class Condition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastTransitionTime: str
    observedGeneration: int


class PodSetAssignment(TypedDict, total=False):
    name: str
    flavors: dict[str, str]
    """Resource name -> flavor name."""
    resourceUsage: dict[str, str]
    count: int


class Admission(TypedDict, total=False):
    clusterQueue: str
    podSetAssignments: list[PodSetAssignment]


class WorkloadStatus(TypedDict, total=False):
    conditions: list[Condition]
    admission: Admission


_EMPTY: Mapping[str, Any] = {}


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def _text(value: object) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


# --- metadata ----------------------------------------------------------------------


def metadata(obj: RawObject) -> ObjectMeta:
    """``obj.metadata``, or an empty mapping when missing or not a mapping: pure."""
    return cast(ObjectMeta, _mapping(obj.get("metadata")))


def spec(obj: RawObject) -> Mapping[str, Any]:
    """``obj.spec``, or an empty mapping: pure."""
    return _mapping(obj.get("spec"))


def status(obj: RawObject) -> Mapping[str, Any]:
    """``obj.status``, or an empty mapping: pure."""
    return _mapping(obj.get("status"))


def name(obj: RawObject) -> str:
    """``metadata.name``, ``""`` when absent: pure."""
    return _text(metadata(obj).get("name")) or ""


def namespace(obj: RawObject) -> str | None:
    """``metadata.namespace``; None for cluster-scoped objects (or when absent): pure."""
    return _text(metadata(obj).get("namespace"))


def key(obj: RawObject) -> str:
    """``namespace/name`` for a namespaced object, ``name`` otherwise: pure.

    The key of the informers' stores, of the engine's Workloads and of the
    state's indexes.
    """
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def uid(obj: RawObject) -> str | None:
    """``metadata.uid``: pure."""
    return _text(metadata(obj).get("uid"))


def resource_version(obj: RawObject) -> str:
    """``metadata.resourceVersion``, ``""`` when absent: pure."""
    value = metadata(obj).get("resourceVersion")
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""


def is_older(incoming: RawObject, known: RawObject) -> bool:
    """Whether ``incoming`` is an older version of the object than ``known``: pure.

    The API server's resourceVersions are etcd revisions: decimal numbers
    that grow with every write, so the smaller one was written first.  Only
    versions of the same object (same UID) compare; when the UIDs differ
    (deleted and created again) or either version is not a number, nothing
    can be said: False.
    """
    if uid(incoming) != uid(known):
        return False
    new, old = resource_version(incoming), resource_version(known)
    if not (new.isdigit() and old.isdigit()):
        return False
    return int(new) < int(old)


def generation(obj: RawObject) -> int | None:
    """``metadata.generation`` when it is an integer: pure."""
    value = metadata(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _string_map(value: object) -> dict[str, str]:
    return {k: v for k, v in _mapping(value).items() if isinstance(k, str) and isinstance(v, str)}


def labels(obj: RawObject) -> dict[str, str]:
    """``metadata.labels`` (string entries only; a copy): pure."""
    return _string_map(metadata(obj).get("labels"))


def annotations(obj: RawObject) -> dict[str, str]:
    """``metadata.annotations`` (string entries only; a copy): pure."""
    return _string_map(metadata(obj).get("annotations"))


def label(obj: RawObject, key: str) -> str | None:
    """One label's value (a string), without copying the others: pure."""
    value = _mapping(metadata(obj).get("labels")).get(key)
    return value if isinstance(value, str) else None


def annotation(obj: RawObject, key: str) -> str | None:
    """One annotation's value (a string), without copying the others: pure."""
    value = _mapping(metadata(obj).get("annotations")).get(key)
    return value if isinstance(value, str) else None


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 timestamp of the API (``2025-01-01T00:00:00Z``), or None: pure."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def creation_time(obj: RawObject) -> datetime | None:
    """``metadata.creationTimestamp`` as a time: pure."""
    return parse_time(metadata(obj).get("creationTimestamp"))


def is_being_deleted(obj: RawObject) -> bool:
    """``metadata.deletionTimestamp`` is set: pure."""
    return bool(metadata(obj).get("deletionTimestamp"))


# --- owners --------------------------------------------------------------------------


def owner_references(obj: RawObject) -> list[OwnerReference]:
    """The well-formed (mapping) entries of ``metadata.ownerReferences``: pure."""
    references = metadata(obj).get("ownerReferences")
    if not isinstance(references, list):
        return []
    return [ref for ref in references if isinstance(ref, Mapping)]


def controller_reference(obj: RawObject) -> OwnerReference | None:
    """The owner reference with ``controller: true``, if any: pure."""
    return next((ref for ref in owner_references(obj) if ref.get("controller") is True), None)


def api_group(api_version: object) -> str | None:
    """The group of an ``apiVersion`` (``""`` for the core ``v1``), None if not a string: pure."""
    if not isinstance(api_version, str) or not api_version:
        return None
    group, slash, _ = api_version.rpartition("/")
    return group if slash else ""


def owner_uid(obj: RawObject, *, kind: str, group: str) -> str | None:
    """The UID of the first owner of ``kind`` in API ``group``: pure."""
    for ref in owner_references(obj):
        if ref.get("kind") == kind and api_group(ref.get("apiVersion")) == group:
            found = _text(ref.get("uid"))
            if found:
                return found
    return None


def owner_job_uid(workload: RawObject) -> str | None:
    """The UID of the batch Job that owns ``workload``: pure.

    The one rule: the owner reference of kind ``Job`` in group ``batch``,
    else the ``kueue.x-k8s.io/job-uid`` label; None when neither is there.
    """
    return owner_uid(workload, kind="Job", group="batch") or _text(label(workload, JOB_UID_LABEL))


def prebuilt_workload_name(job: RawObject) -> str | None:
    """The Workload a job uses instead of getting one made (label, else annotation): pure.

    MultiKueue creates a worker's Job this way: its Workload, already admitted,
    is the copy of the manager's.
    """
    return label(job, PREBUILT_WORKLOAD_KEY) or annotation(job, PREBUILT_WORKLOAD_KEY) or None


# --- the queue a job asks for -------------------------------------------------------


def queue_name(obj: RawObject) -> str:
    """The effective queue name of a job (label, else legacy annotation), ``""`` when none: pure."""
    # On the webhook's hot path: read the two keys, copy nothing.
    return label(obj, QUEUE_NAME_LABEL) or annotation(obj, QUEUE_NAME_ANNOTATION) or ""


# --- conditions -----------------------------------------------------------------------


def conditions(obj: RawObject) -> list[Condition]:
    """The well-formed (mapping) entries of ``status.conditions``: pure."""
    found = status(obj).get("conditions")
    if not isinstance(found, list):
        return []
    return [cast(Condition, item) for item in found if isinstance(item, Mapping)]


def find_condition(items: Sequence[Mapping[str, Any]], kind: str) -> Condition | None:
    """The condition of type ``kind`` in a list of conditions: pure."""
    return next(
        (cast(Condition, c) for c in items if isinstance(c, Mapping) and c.get("type") == kind),
        None,
    )


def condition(obj: RawObject, kind: str) -> Condition | None:
    """The status condition of type ``kind`` of ``obj``, if any: pure."""
    return find_condition(conditions(obj), kind)


def is_true(obj: RawObject, kind: str) -> bool:
    """Whether condition ``kind`` of ``obj`` has status ``True``: pure."""
    found = condition(obj, kind)
    return found is not None and found.get("status") == "True"


# --- Workloads ------------------------------------------------------------------------


def admission(workload: RawObject) -> Admission | None:
    """``status.admission`` when it records something: pure."""
    found = status(workload).get("admission")
    return cast(Admission, found) if isinstance(found, Mapping) and found else None


def admitted_cluster_queue(workload: RawObject) -> str:
    """The ClusterQueue of the Workload's admission record, ``""`` when none: pure."""
    record = admission(workload)
    if record is None:
        return ""
    return _text(record.get("clusterQueue")) or ""


def pod_set_assignments(workload: RawObject) -> list[PodSetAssignment]:
    """The well-formed entries of ``status.admission.podSetAssignments``: pure."""
    record = admission(workload)
    found = record.get("podSetAssignments") if record is not None else None
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, Mapping)]


def priority_class_name(workload: RawObject) -> str:
    """``spec.priorityClassRef.name`` of a Workload, ``""`` when none: pure."""
    return _text(_mapping(spec(workload).get("priorityClassRef")).get("name")) or ""


def workload_queue_name(workload: RawObject) -> str:
    """``spec.queueName`` of a Workload, ``""`` when none: pure."""
    return _text(spec(workload).get("queueName")) or ""


def has_quota_reservation(workload: RawObject) -> bool:
    """``QuotaReserved=True`` and an admission record: the Workload holds quota: pure.

    Both are required: the scheduler writes them in one status write, and a
    condition without its record cannot say on which flavors the Job runs.
    """
    return admission(workload) is not None and is_true(workload, QUOTA_RESERVED)


def is_admitted(workload: RawObject) -> bool:
    """The ``Admitted`` condition is True: pure."""
    return is_true(workload, ADMITTED)


def is_evicting(workload: RawObject) -> bool:
    """``Evicted=True`` while holding quota (its Job must stop before the release): pure."""
    return has_quota_reservation(workload) and is_true(workload, EVICTED)


def is_finished(workload: RawObject) -> bool:
    """``Finished=True``: pure."""
    return is_true(workload, FINISHED)


def admission_check_states(workload: RawObject) -> list[Mapping[str, Any]]:
    """The well-formed entries of ``status.admissionChecks`` (one per check, by name): pure."""
    found = status(workload).get("admissionChecks")
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, Mapping) and item.get("name")]


def awaits_admission_checks(workload: RawObject) -> bool:
    """Quota reserved, admission checks listed and ``Admitted`` not True yet: pure.

    Its Job stays suspended until every check is Ready and the Workload is admitted.
    """
    return (
        has_quota_reservation(workload)
        and bool(admission_check_states(workload))
        and not is_admitted(workload)
    )


def is_on_hold(workload: RawObject) -> bool:
    """``QuotaReserved=False`` with reason ``OnHold``: held back on purpose, not queued: pure."""
    found = condition(workload, QUOTA_RESERVED) or {}
    return found.get("status") == "False" and found.get("reason") == ON_HOLD


def is_deactivated(workload: RawObject) -> bool:
    """``spec.active: false``: pure."""
    return spec(workload).get("active") is False


def metadata_for_copy(obj: RawObject) -> dict[str, Any]:
    """Name, namespace, labels and annotations: what a copy on another cluster keeps: pure."""
    kept: dict[str, Any] = {"name": name(obj)}
    if namespace(obj):
        kept["namespace"] = namespace(obj)
    kept["labels"] = dict(labels(obj))
    found = annotations(obj)
    if found:
        kept["annotations"] = dict(found)
    return kept
