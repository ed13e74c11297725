"""LeaderWorkerSet rules of kuota's validating webhook (docs/validation.md#jobs).

Kueue's LeaderWorkerSet webhook (v0.19) checks, on create and update, the
queue-name label and the legacy annotation (JOB-1, JOB-2),
``kueue.x-k8s.io/admission-gated-by`` (JOB-12),
and ``spec.replicas`` between 0 and 1,000,000 (LWS-1: each replica is a
Workload).  On update, a LeaderWorkerSet counts as running once one of its
groups is ready (the old object's ``status.readyReplicas`` above 0):

* LWS-U1: the queue name cannot change while it runs, nor be removed at all;
* JOB-U3, JOB-U4: a WorkloadPriorityClass cannot be added while it runs, nor
  removed at all;
* JOB-U11: admission gates can only be removed;
* while kuota manages it (queued): LWS-U2, the leader template cannot be
  added or removed and neither template may change what decides admission
  (requests and ports of each container, node selector, affinity,
  tolerations, runtime class, priority, topology spread, overhead, resource
  claims: the Workloads are made once, and their pods keep being admitted
  against them); LWS-U3, ``leaderWorkerTemplate.size`` cannot change (more
  pods per group than the Workload counts would run without quota).

TAS annotations are not checked: kuota has no topology-aware scheduling;
nor is the elastic-job annotation (elastic jobs are not implemented, their
rules are off: docs/api-differences.md).
Everything here is pure and never raises.
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
from scheduler.jobs.leaderworkerset.replicas import size
from scheduler.jobs.pod.pods import spec_shape

MAX_REPLICAS: Final = 1_000_000
SPEC = FieldPath(("spec",))
TEMPLATE = SPEC.child("leaderWorkerTemplate")
TEMPLATES: Final = ("leaderTemplate", "workerTemplate")
RULE_ORDER: Final = [
    "JOB-1",
    "JOB-2",
    "JOB-12",
    "LWS-1",
    "LWS-U1",
    "JOB-U3",
    "JOB-U4",
    "JOB-U11",
    "LWS-U2",
    "LWS-U3",
]
SHARED_UPDATE_RULES: Final = frozenset({"JOB-U3", "JOB-U4", "JOB-U11"})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _ready(lws: Mapping[str, Any]) -> bool:
    """One of the groups is ready: what "running" means for the update rules."""
    ready = _mapping(lws.get("status")).get("readyReplicas")
    return isinstance(ready, int) and ready > 0


def _check_create(obj: dict[str, Any], errors: list[FieldError]) -> None:
    check_metadata(obj, errors, namespaced=True)
    job_rules.check_queue_names(obj, errors)
    errors.extend(  # JOB-12 only: max-exec-time and prebuilt names are not the kind's
        item for item in _label_rules(obj) if item.rule == "JOB-12"
    )
    replicas = _mapping(obj.get("spec")).get("replicas", 1)
    if isinstance(replicas, int) and not 0 <= replicas <= MAX_REPLICAS:
        errors.append(
            error(
                SPEC.child("replicas"),
                f"must be between 0 and {MAX_REPLICAS:,} (each replica is a Workload), "
                f"got {replicas}",
                rule="LWS-1",
            )
        )


def _label_rules(obj: dict[str, Any]) -> list[FieldError]:
    found: list[FieldError] = []
    job_rules.check_job_labels(obj, found)
    return found


def _check_templates(
    obj: Mapping[str, Any], old: Mapping[str, Any], errors: list[FieldError]
) -> None:
    """LWS-U2 and LWS-U3: what the Workloads were made from stays as it was."""
    new_template = _mapping(_mapping(obj.get("spec")).get("leaderWorkerTemplate"))
    old_template = _mapping(_mapping(old.get("spec")).get("leaderWorkerTemplate"))
    for name in TEMPLATES:
        new_pods, old_pods = new_template.get(name), old_template.get(name)
        at = TEMPLATE.child(name)
        if isinstance(new_pods, Mapping) != isinstance(old_pods, Mapping):
            verb = "added" if isinstance(new_pods, Mapping) else "removed"
            errors.append(
                error(
                    at,
                    f"cannot be {verb} while kuota manages the LeaderWorkerSet",
                    rule="LWS-U2",
                )
            )
            continue
        if not isinstance(new_pods, Mapping) or not isinstance(old_pods, Mapping):
            continue
        new_shape = spec_shape(_mapping(new_pods.get("spec")))
        old_shape = spec_shape(_mapping(old_pods.get("spec")))
        for field, value in new_shape.items():
            if value != old_shape.get(field):
                errors.append(
                    error(
                        at.child("spec").child(field),
                        "cannot change while kuota manages the LeaderWorkerSet: its Workloads "
                        "were made from it (only fields that do not decide admission may change)",
                        rule="LWS-U2",
                    )
                )
    if size(obj) != size(old):
        errors.append(
            error(
                TEMPLATE.child("size"),
                f'is immutable while kuota manages the LeaderWorkerSet; it was "{size(old)}"',
                rule="LWS-U3",
            )
        )


def _check_update(
    obj: dict[str, Any], old: dict[str, Any], errors: list[FieldError], *, managed: bool
) -> None:
    running = _ready(old)
    job_rules.check_queued_while_running(
        obj,
        old,
        errors,
        running=running,
        rule="LWS-U1",
        what="a group of it",
        shared_rules=SHARED_UPDATE_RULES,
    )
    if managed:
        _check_templates(obj, old, errors)


def validate_leaderworkerset(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None, *, managed: bool = False
) -> list[FieldError]:
    """Every LeaderWorkerSet rule (CREATE, or UPDATE when ``old`` is given).

    ``managed``: kuota manages the LeaderWorkerSet (the webhook knows; ``kuota
    validate`` takes a queued one for managed).
    """
    errors: list[FieldError] = []
    obj = prepare(new, JOB, errors)
    if obj is None:
        return errors
    errors = [item for item in errors if item.rule != "UNKNOWN-FIELD"]  # the kind's schema
    _check_create(obj, errors)
    old_obj = prepare_old(old, JOB)
    if old_obj is not None:
        _check_update(obj, old_obj, errors, managed=managed or bool(queue_name(obj)))
    return in_rule_order(errors, RULE_ORDER)
