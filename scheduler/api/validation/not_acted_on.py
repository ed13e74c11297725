"""Fields of kuota's API objects that kuota accepts and does not act on: warnings.

An object is valid or not by the rules of its kind; a few valid fields ask
for a feature that Kueue v0.19 itself provides only behind a feature gate
kuota does not have (docs/configuration.md#feature-gates).  kuota then does
what Kueue does with that gate off, and says so: the webhook answers with an
admission warning (``kubectl`` prints it), ``kuota validate`` prints it too.

* ``MultiKueueConfig`` ``spec.quotaManagement: Automated``: Kueue sets the
  manager ClusterQueue's quota from its workers only with
  ``MultiKueueManagerQuotaAutomation``; kuota leaves the quota as written.
* ``ClusterQueue`` ``spec.concurrentAdmissionPolicy``: Kueue pursues several
  flavors at once only with ``ConcurrentAdmission`` (alpha, off by default);
  kuota admits as Kueue does without it.
* ``Workload`` ``spec.preemptionGates``: Kueue holds a gated Workload's
  preemptions only with ``ConcurrentAdmission`` or
  ``MultiKueueOrchestratedPreemption``; kuota, which has neither, lets it
  preempt as Kueue does without them.

A warning is given when the field is set on create, or changed on update.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.api.refs import V1BETA2

Notes = Callable[[Mapping[str, Any], Mapping[str, Any] | None], list[str]]


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = obj.get("spec") if obj is not None else None
    return spec if isinstance(spec, Mapping) else {}


def _set_or_changed(
    new: Mapping[str, Any], old: Mapping[str, Any] | None, name: str, value: object
) -> bool:
    if _spec(new).get(name) != value:
        return False
    return old is None or _spec(old).get(name) != value


def multikueue_config_notes(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    if not _set_or_changed(new, old, "quotaManagement", "Automated"):
        return []
    return [
        "spec.quotaManagement: Automated: kuota does not set the manager ClusterQueue's quota "
        "from its workers (Kueue's MultiKueueManagerQuotaAutomation feature, which kuota does "
        "not have): set the quota by hand"
    ]


def workload_notes(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    gates = _spec(new).get("preemptionGates")
    if not gates or not _set_or_changed(new, old, "preemptionGates", gates):
        return []
    return [
        "spec.preemptionGates: kuota does not hold preemptions back, as Kueue without its "
        "ConcurrentAdmission and MultiKueueOrchestratedPreemption features (which kuota does "
        "not have): this Workload may preempt while a gate is closed"
    ]


def cluster_queue_notes(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    policy = _spec(new).get("concurrentAdmissionPolicy")
    if not policy or not _set_or_changed(new, old, "concurrentAdmissionPolicy", policy):
        return []
    return [
        "spec.concurrentAdmissionPolicy: kuota does not try several flavors at once, as Kueue "
        "without its ConcurrentAdmission feature (alpha, off by default; kuota does not have "
        "it): this ClusterQueue admits each workload to one flavor, in order"
    ]


NOTES: dict[tuple[str, str], Notes] = {
    (V1BETA2, "ClusterQueue"): cluster_queue_notes,
    (V1BETA2, "MultiKueueConfig"): multikueue_config_notes,
    (V1BETA2, "Workload"): workload_notes,
}


def object_warnings(
    key: tuple[str, str], new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[str]:
    """The warnings of a valid object of kind ``key`` (apiVersion, kind): pure."""
    notes = NOTES.get(key)
    return notes(new, old) if notes is not None else []
