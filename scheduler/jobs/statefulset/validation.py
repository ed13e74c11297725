"""StatefulSet rules of kuota's validating webhook (docs/validation.md#jobs).

Kueue's StatefulSet webhook (v0.19) checks, on create and update, the
queue-name label and the legacy annotation (JOB-1, JOB-2) and
``kueue.x-k8s.io/admission-gated-by`` (JOB-12).  On update, a StatefulSet
counts as running once one of its replicas is ready (the old object's
``status.readyReplicas`` above 0):

* STS-U1: the queue name cannot change while it runs, nor be removed at all
  (while none is ready it may: the Workload and the waiting pods follow it);
* JOB-U3, JOB-U4: a WorkloadPriorityClass cannot be added while it runs, nor
  removed at all;
* JOB-U11: admission gates can only be removed;
* while kuota manages it (queued): STS-U2, the pod template may not change
  what decides admission (requests and ports of each container, node
  selector, affinity, tolerations, runtime class, priority, topology spread,
  overhead, resource claims: the Workload was made from it); STS-U3,
  ``spec.replicas`` changes only to or from zero (the Workload counts the
  pods); STS-U4, a scale-up from zero waits until the scale-down has ended
  (``status.replicas`` 0).

Kueue also refuses a scale-up from zero while the Workload of the scale-down
is not on hold yet; that needs a lookup the webhook does not make
(docs/api-differences.md#not-implemented-yet).  Everything here is pure and
never raises.  A StatefulSet whose pod template names another suspending
parent (a LeaderWorkerSet's) is not judged, as in Kueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.objects import queue_name
from scheduler.api.validation.common import in_rule_order, prepare, prepare_old
from scheduler.api.validation.formats import check_metadata
from scheduler.api.validation.known_fields import JOB
from scheduler.jobs import job_rules
from scheduler.jobs.pod.pods import spec_shape
from scheduler.jobs.statefulset.replicas import managed_by_another_framework, replicas

SPEC = FieldPath(("spec",))
RULE_ORDER: Final = [
    "JOB-1",
    "JOB-2",
    "JOB-12",
    "STS-U1",
    "JOB-U3",
    "JOB-U4",
    "JOB-U11",
    "STS-U2",
    "STS-U3",
    "STS-U4",
]
SHARED_UPDATE_RULES: Final = frozenset({"JOB-U3", "JOB-U4", "JOB-U11"})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _status_count(sts: Mapping[str, Any], field: str) -> int:
    value = _mapping(sts.get("status")).get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_create(obj: dict[str, Any], errors: list[FieldError]) -> None:
    check_metadata(obj, errors, namespaced=True)
    job_rules.check_queue_names(obj, errors)
    found: list[FieldError] = []
    job_rules.check_job_labels(obj, found)
    errors.extend(item for item in found if item.rule == "JOB-12")


def _check_managed(
    obj: Mapping[str, Any], old: Mapping[str, Any], errors: list[FieldError]
) -> None:
    """STS-U2 … STS-U4: what the Workload was made from stays as it was."""
    at = SPEC.child("template").child("spec")
    new_shape = spec_shape(
        _mapping(_mapping(_mapping(obj.get("spec")).get("template")).get("spec"))
    )
    old_shape = spec_shape(
        _mapping(_mapping(_mapping(old.get("spec")).get("template")).get("spec"))
    )
    for field, value in new_shape.items():
        if value != old_shape.get(field):
            errors.append(
                error(
                    at.child(field),
                    "cannot change while kuota manages the StatefulSet: its Workload was made "
                    "from it (only fields that do not decide admission may change)",
                    rule="STS-U2",
                )
            )
    new_count, old_count = replicas(obj), replicas(old)
    if new_count != old_count and new_count != 0 and old_count != 0:
        errors.append(
            error(
                SPEC.child("replicas"),
                "may change only to or from 0 while kuota manages the StatefulSet; "
                f'it was "{old_count}"',
                rule="STS-U3",
            )
        )
    if old_count == 0 and new_count > 0 and _status_count(obj, "replicas") > 0:
        errors.append(
            error(SPEC.child("replicas"), "scaling down is still in progress", rule="STS-U4")
        )


def _check_update(
    obj: dict[str, Any], old: dict[str, Any], errors: list[FieldError], *, managed: bool
) -> None:
    running = _status_count(old, "readyReplicas") > 0
    job_rules.check_queued_while_running(
        obj,
        old,
        errors,
        running=running,
        rule="STS-U1",
        what="a replica",
        shared_rules=SHARED_UPDATE_RULES,
    )
    if managed:
        _check_managed(obj, old, errors)


def validate_statefulset(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None, *, managed: bool = False
) -> list[FieldError]:
    """Every StatefulSet rule (CREATE, or UPDATE when ``old`` is given).

    ``managed``: kuota manages the StatefulSet (the webhook knows; ``kuota
    validate`` takes a queued one for managed).  One whose template names another
    suspending parent (a LeaderWorkerSet's) is that framework's: not judged.
    """
    errors: list[FieldError] = []
    obj = prepare(new, JOB, errors)
    if obj is None:
        return errors
    if managed_by_another_framework(obj):
        return []
    errors = [item for item in errors if item.rule != "UNKNOWN-FIELD"]  # the kind's schema
    _check_create(obj, errors)
    old_obj = prepare_old(old, JOB)
    if old_obj is not None:
        _check_update(obj, old_obj, errors, managed=managed or bool(queue_name(obj)))
    return in_rule_order(errors, RULE_ORDER)
