"""The admission rules every job kind shares (docs/validation.md#jobs).

Kueue checks the same labels and annotations on every kind of job it
manages (``jobframework.ValidateJobOnCreate``/``ValidateJobOnUpdate``); each
integration's own rules are in its folder (``scheduler/jobs/<kind>/``) and
call these: JOB-1 … JOB-4, JOB-11, JOB-12 on create and update, JOB-U1 …
JOB-U6, JOB-U10, JOB-U11 on update.  Only kuota's labels and annotations are
checked; a kind's schema is the API server's business.  Queue name = label
``kueue.x-k8s.io/queue-name``, or (legacy, kuota) the annotation of the same
key when the label is absent or empty.  "Suspended" = ``spec.suspend: true``.
Every function is pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.objects import queue_name as queue_name  # the one queue-name rule
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION as ELASTIC_JOB
from scheduler.api.refs import MAX_EXEC_TIME_SECONDS_KEY as MAX_EXEC_TIME
from scheduler.api.refs import PREBUILT_WORKLOAD_KEY as PREBUILT_WORKLOAD
from scheduler.api.refs import PRIORITY_CLASS_LABEL as PRIORITY_CLASS
from scheduler.api.refs import QUEUE_NAME_LABEL as QUEUE_NAME
from scheduler.api.validation.admission_gates import check_gated_by, check_gates_only_shrink
from scheduler.api.validation.common import in_rule_order, prepare, prepare_old
from scheduler.api.validation.formats import (
    as_dict,
    check_metadata,
    immutable,
    is_subdomain,
    not_subdomain,
    render_value,
)
from scheduler.api.validation.known_fields import JOB

LABELS = FieldPath(("metadata", "labels"))
ANNOTATIONS = FieldPath(("metadata", "annotations"))
RULE_ORDER = (
    [f"JOB-{n}" for n in (1, 2, 3, 4, 11, 12)]
    + [f"JOB-U{n}" for n in (1, 2, 3, 4, 5, 6, 10, 11)]
    + ["UNKNOWN-FIELD"]
)
"""The shared rules, in the order of the tables (a kind with rules of its own has its own order)."""
INT_RE = re.compile(r"[+-]?[0-9]+")
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def labels_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(obj.get("metadata")).get("labels"))


def annotations_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(obj.get("metadata")).get("annotations"))


def is_suspended(obj: Mapping[str, Any]) -> bool:
    return as_dict(obj.get("spec")).get("suspend") is True


def is_elastic(obj: Mapping[str, Any]) -> bool:
    return annotations_of(obj).get(ELASTIC_JOB) == "true"


def _prebuilt(obj: Mapping[str, Any]) -> object:
    return labels_of(obj).get(PREBUILT_WORKLOAD) or annotations_of(obj).get(PREBUILT_WORKLOAD)


def as_bool(value: object) -> bool | None:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def check_queue_names(obj: dict[str, Any], errors: list[FieldError]) -> None:
    """JOB-1, JOB-2: the queue name (label, or the legacy annotation) is a valid name."""
    labels, annotations = labels_of(obj), annotations_of(obj)
    # JOB-2 is K: Kueue dropped the legacy annotation in v0.15; kuota still honours and checks it.
    queue_names: tuple[tuple[dict[str, Any], FieldPath, str, Origin], ...] = (
        (labels, LABELS, "JOB-1", "W"),
        (annotations, ANNOTATIONS, "JOB-2", "K"),
    )
    for source, path, rule, origin in queue_names:
        value = source.get(QUEUE_NAME)
        if isinstance(value, str) and value != "" and not is_subdomain(value):
            errors.append(
                error(
                    path.key(QUEUE_NAME),
                    not_subdomain(value, "LocalQueue name"),
                    origin=origin,
                    rule=rule,
                )
            )


def check_job_labels(obj: dict[str, Any], errors: list[FieldError]) -> None:
    """JOB-1 … JOB-4, JOB-11, JOB-12 (the checks shared with JobSet)."""
    labels, annotations = labels_of(obj), annotations_of(obj)
    check_queue_names(obj, errors)
    limit = labels.get(MAX_EXEC_TIME)
    if isinstance(limit, str):
        at = LABELS.key(MAX_EXEC_TIME)
        if INT_RE.fullmatch(limit) is None:
            errors.append(error(at, f'"{limit}" is not an integer number of seconds', rule="JOB-3"))
        elif int(limit) <= 0:
            errors.append(error(at, "must be greater than 0", rule="JOB-4"))
    for source, path in ((labels, LABELS), (annotations, ANNOTATIONS)):
        value = source.get(PREBUILT_WORKLOAD)
        if isinstance(value, str) and not is_subdomain(value):
            errors.append(
                error(
                    path.key(PREBUILT_WORKLOAD),
                    not_subdomain(value, "Workload name"),
                    rule="JOB-11",
                )
            )
    check_gated_by(annotations, errors, rule="JOB-12")


def check_job_update(
    obj: dict[str, Any],
    old: dict[str, Any],
    errors: list[FieldError],
    *,
    namespace_has_default_queue: bool,
    suspended_when: Callable[[Mapping[str, Any]], bool] = is_suspended,
) -> None:
    """JOB-U1 … JOB-U6, JOB-U10, JOB-U11 (the update checks shared by every kind).

    ``suspended_when``: where the kind says it is suspended (``spec.suspend``
    unless the kind has it elsewhere).
    """
    suspended, was_suspended = suspended_when(obj), suspended_when(old)
    queue, old_queue = queue_name(obj), queue_name(old)
    at_queue = LABELS.key(QUEUE_NAME)
    if not suspended and queue != old_queue:
        errors.append(
            error(
                at_queue,
                "cannot change while the job is running (not suspended); suspend the job first",
                rule="JOB-U1",
            )
        )
    if queue == "" and old_queue != "" and namespace_has_default_queue:
        errors.append(
            error(
                at_queue,
                'must not be removed in a namespace with a "default" LocalQueue',
                rule="JOB-U2",
            )
        )
    # An empty label names no class, as an absent one (Kueue's IsWorkloadPriorityClassNameEmpty):
    # setting it to "" removes the class (JOB-U4), adding "" adds none.
    priority = labels_of(obj).get(PRIORITY_CLASS) or None
    old_priority = labels_of(old).get(PRIORITY_CLASS) or None
    at_priority = LABELS.key(PRIORITY_CLASS)
    if not suspended and old_priority is None and priority is not None:
        errors.append(
            error(
                at_priority,
                "a WorkloadPriorityClass cannot be added to a running (not suspended) job",
                rule="JOB-U3",
            )
        )
    if old_priority is not None and priority is None:
        errors.append(
            error(
                at_priority,
                "a WorkloadPriorityClass cannot be removed from a job; change it to another class "
                "instead",
                rule="JOB-U4",
            )
        )
    if (not suspended or not was_suspended) and labels_of(obj).get(MAX_EXEC_TIME) != labels_of(
        old
    ).get(MAX_EXEC_TIME):
        errors.append(
            error(
                LABELS.key(MAX_EXEC_TIME),
                "cannot change unless the job stays suspended",
                rule="JOB-U5",
            )
        )
    if not suspended and not is_elastic(obj) and _prebuilt(obj) != _prebuilt(old):
        errors.append(
            error(
                LABELS.key(PREBUILT_WORKLOAD),
                "cannot change while the job is running",
                rule="JOB-U6",
            )
        )
    if is_elastic(obj) != is_elastic(old):
        errors.append(
            error(
                ANNOTATIONS.key(ELASTIC_JOB),
                immutable(render_value(annotations_of(old).get(ELASTIC_JOB))),
                rule="JOB-U10",
            )
        )
    check_gates_only_shrink(annotations_of(old), annotations_of(obj), errors, rule="JOB-U11")


def check_queued_while_running(
    obj: dict[str, Any],
    old: dict[str, Any],
    errors: list[FieldError],
    *,
    running: bool,
    rule: str,
    what: str,
    shared_rules: frozenset[str],
) -> None:
    """The update rules of a kind queued a group at a time (a LeaderWorkerSet, a StatefulSet).

    Its queue name may not be removed, nor changed while ``what`` (a ready
    replica, a ready group) runs: rule ``rule``; and the ``shared_rules`` of
    :func:`check_job_update`, the object counting as suspended while nothing runs.
    """
    queue, old_queue = queue_name(obj), queue_name(old)
    if queue != old_queue and (running or not queue):
        why = "removed" if not queue else f"changed while {what} is ready"
        errors.append(
            error(
                LABELS.key(QUEUE_NAME),
                f'cannot be {why}; it was "{render_value(old_queue)}"',
                rule=rule,
            )
        )
    shared: list[FieldError] = []
    check_job_update(
        obj, old, shared, namespace_has_default_queue=False, suspended_when=lambda _: not running
    )
    errors.extend(item for item in shared if item.rule in shared_rules)


def validate_job_kind(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespace_has_default_queue: bool = False,
    suspended_when: Callable[[Mapping[str, Any]], bool] = is_suspended,
) -> list[FieldError]:
    """The shared rules alone (a kind without rules of its own, e.g. JobSet): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, JOB, errors)
    if obj is None:
        return errors
    errors = [item for item in errors if item.rule != "UNKNOWN-FIELD"]  # the kind's schema
    old_obj = prepare_old(old, JOB)
    check_metadata(obj, errors, namespaced=True)
    check_job_labels(obj, errors)
    if old_obj is not None:
        check_job_update(
            obj,
            old_obj,
            errors,
            namespace_has_default_queue=namespace_has_default_queue,
            suspended_when=suspended_when,
        )
    return in_rule_order(errors, RULE_ORDER)
