"""batch/v1 Job rules of kuota's validating webhook (validation.md section 11).

Only the kuota-specific labels and annotations of a Job are checked; the Job
schema itself is the API server's business.  Queue name = label
``kueue.x-k8s.io/queue-name``, or (legacy, kuota) the annotation of the same
key when the label is absent or empty.  "Suspended" = ``spec.suspend: true``.

The generic checks (``check_job_labels``, ``check_job_update``) are shared
with JobSet (section 12) through the ``job_specific`` switch.

**JOB-K2** (kuota, issue 12 item 4) guards the quota of a running Job.  A
queued Job runs only once kuota's scheduler has admitted it (JOB-K1), with a
quota reservation sized from its pod count; changing that count afterwards
would run more pods than were reserved, and nothing would react.  So while a
Job kuota manages stays unsuspended and unfinished, an update by anyone but
the scheduler may not change what its quota depends on:

* ``spec.parallelism`` (always mutable for the API server);
* ``spec.completions`` (mutable for Indexed Jobs, in tandem with
  ``parallelism``: elastic Indexed Jobs);
* ``spec.template``: nothing to check.  kube-apiserver 1.36 refuses every
  template change on a Job whose old ``spec.suspend`` is not true
  (``validatePodTemplateUpdate``: the scheduling directives and pod resources
  become mutable only while suspended), and validating webhooks run after
  that check; ``e2e/test_webhook_job_quota.py`` proves it on the local
  cluster.

Suspending the Job in the same update is allowed: it gives the reservation
back, and kuota queues the Job again as it now is.  Whether the Job is
kuota's (queued in a managed namespace, or managed without a queue name)
and whether the request comes from kuota's scheduler are facts of the
request, which the webhook passes in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.objects import queue_name as queue_name  # the one queue-name rule
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION as ELASTIC_JOB
from scheduler.api.refs import (
    JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION as COMPLETIONS_EQUAL_PARALLELISM,
)
from scheduler.api.refs import JOB_MIN_PARALLELISM_ANNOTATION as MIN_PARALLELISM
from scheduler.api.refs import MAX_EXEC_TIME_SECONDS_KEY as MAX_EXEC_TIME
from scheduler.api.refs import PREBUILT_WORKLOAD_KEY as PREBUILT_WORKLOAD
from scheduler.api.refs import PRIORITY_CLASS_LABEL as PRIORITY_CLASS
from scheduler.api.refs import QUEUE_NAME_LABEL as QUEUE_NAME
from scheduler.api.validation.admission_gates import check_gated_by, check_gates_only_shrink
from scheduler.api.validation.common import in_rule_order, numbered, prepare, prepare_old
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
RULE_ORDER = numbered("JOB", 12) + [f"JOB-U{n}" for n in range(1, 12)] + ["JOB-K2", "UNKNOWN-FIELD"]
QUOTA_FIELDS = ("parallelism", "completions")
"""The fields of ``spec`` a running Job's quota reservation depends on (JOB-K2)."""
_INT_RE = re.compile(r"[+-]?[0-9]+")
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _labels(obj: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(obj.get("metadata")).get("labels"))


def _annotations(obj: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(obj.get("metadata")).get("annotations"))


def _suspended(obj: Mapping[str, Any]) -> bool:
    return as_dict(obj.get("spec")).get("suspend") is True


def _elastic(obj: Mapping[str, Any]) -> bool:
    return _annotations(obj).get(ELASTIC_JOB) == "true"


def _prebuilt(obj: Mapping[str, Any]) -> object:
    return _labels(obj).get(PREBUILT_WORKLOAD) or _annotations(obj).get(PREBUILT_WORKLOAD)


def _as_bool(value: object) -> bool | None:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _pod_count(spec: Mapping[str, Any]) -> int:
    raw_parallelism = spec.get("parallelism")
    parallelism = raw_parallelism if isinstance(raw_parallelism, int) else 1
    completions = spec.get("completions")
    return min(parallelism, completions) if isinstance(completions, int) else parallelism


def check_job_labels(obj: dict[str, Any], errors: list[FieldError]) -> None:
    """JOB-1 … JOB-4, JOB-11, JOB-12 (the checks shared with JobSet)."""
    labels, annotations = _labels(obj), _annotations(obj)
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
    limit = labels.get(MAX_EXEC_TIME)
    if isinstance(limit, str):
        at = LABELS.key(MAX_EXEC_TIME)
        if _INT_RE.fullmatch(limit) is None:
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


def _check_batch_annotations(
    obj: dict[str, Any], old: dict[str, Any] | None, errors: list[FieldError]
) -> None:
    """JOB-5 … JOB-10 (JOB-5/6/7 on update only when the annotation changed: JOB-U9)."""
    annotations, spec = _annotations(obj), as_dict(obj.get("spec"))
    minimum = annotations.get(MIN_PARALLELISM)
    changed = old is None or _annotations(old).get(MIN_PARALLELISM) != minimum
    if isinstance(minimum, str) and changed:
        at = ANNOTATIONS.key(MIN_PARALLELISM)
        count = _pod_count(spec)
        if _INT_RE.fullmatch(minimum) is None:
            errors.append(error(at, f'"{minimum}" is not an integer', rule="JOB-5"))
        elif not 0 < int(minimum) < count:
            errors.append(
                error(
                    at,
                    f"must be between 1 and {count - 1} (the job runs {count} pods)",
                    rule="JOB-6",
                )
            )
        if _elastic(obj):
            errors.append(
                error(at, "partial admission and elastic jobs cannot be combined", rule="JOB-7")
            )
    equal = annotations.get(COMPLETIONS_EQUAL_PARALLELISM)
    if isinstance(equal, str):
        at = ANNOTATIONS.key(COMPLETIONS_EQUAL_PARALLELISM)
        enabled = _as_bool(equal)
        if enabled is None:
            errors.append(error(at, f'"{equal}" is not true or false', rule="JOB-8"))
        elif enabled:
            if spec.get("completionMode") in (None, "", "NonIndexed"):
                errors.append(
                    error(
                        at,
                        "may only be enabled for Indexed jobs (spec.completionMode: Indexed)",
                        rule="JOB-9",
                    )
                )
            parallelism = spec.get("parallelism") if isinstance(spec.get("parallelism"), int) else 1
            completions = spec.get("completions") if isinstance(spec.get("completions"), int) else 1
            if parallelism != completions:
                errors.append(
                    error(
                        FieldPath(("spec", "completions")),
                        f"must equal parallelism ({parallelism}) when "
                        f"{COMPLETIONS_EQUAL_PARALLELISM} is true",
                        rule="JOB-10",
                    )
                )


def check_job_update(
    obj: dict[str, Any],
    old: dict[str, Any],
    errors: list[FieldError],
    *,
    namespace_has_default_queue: bool,
    job_specific: bool,
) -> None:
    """JOB-U1 … JOB-U11 (JOB-U7/U8 only for batch/v1 Jobs)."""
    suspended, was_suspended = _suspended(obj), _suspended(old)
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
    priority, old_priority = _labels(obj).get(PRIORITY_CLASS), _labels(old).get(PRIORITY_CLASS)
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
    if (not suspended or not was_suspended) and _labels(obj).get(MAX_EXEC_TIME) != _labels(old).get(
        MAX_EXEC_TIME
    ):
        errors.append(
            error(
                LABELS.key(MAX_EXEC_TIME),
                "cannot change unless the job stays suspended",
                rule="JOB-U5",
            )
        )
    if not suspended and not _elastic(obj) and _prebuilt(obj) != _prebuilt(old):
        errors.append(
            error(
                LABELS.key(PREBUILT_WORKLOAD),
                "cannot change while the job is running",
                rule="JOB-U6",
            )
        )
    if job_specific:
        spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
        if (
            MIN_PARALLELISM in _annotations(old)
            and not was_suspended
            and spec.get("parallelism") != old_spec.get("parallelism")
        ):
            errors.append(
                error(
                    FieldPath(("spec", "parallelism")),
                    "cannot change while the job runs with partial admission; suspend it first",
                    rule="JOB-U7",
                )
            )
        equal, old_equal = (
            _as_bool(_annotations(item).get(COMPLETIONS_EQUAL_PARALLELISM)) or False
            for item in (obj, old)
        )
        if not suspended and not was_suspended and equal != old_equal:
            errors.append(
                error(
                    ANNOTATIONS.key(COMPLETIONS_EQUAL_PARALLELISM),
                    "cannot change while the job is not suspended",
                    rule="JOB-U8",
                )
            )
    if _elastic(obj) != _elastic(old):
        errors.append(
            error(
                ANNOTATIONS.key(ELASTIC_JOB),
                immutable(render_value(_annotations(old).get(ELASTIC_JOB))),
                rule="JOB-U10",
            )
        )
    check_gates_only_shrink(_annotations(old), _annotations(obj), errors, rule="JOB-U11")


def _finished(obj: Mapping[str, Any]) -> bool:
    return objects.is_true(obj, "Complete") or objects.is_true(obj, "Failed")


def check_admitted_quota(
    obj: Mapping[str, Any], old: Mapping[str, Any], errors: list[FieldError]
) -> None:
    """JOB-K2 for a Job kuota manages, updated by someone other than its scheduler: pure."""
    if _suspended(obj) or _suspended(old) or _finished(old):
        return
    spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
    reserved = _pod_count(old_spec)
    for name in QUOTA_FIELDS:
        if spec.get(name) == old_spec.get(name):
            continue
        at = FieldPath(("spec", name))
        if any(item.field == str(at) for item in errors):
            continue  # JOB-U7 already refused this field, for the same reason
        errors.append(
            error(
                at,
                "cannot change while the job is admitted by kuota (its quota was reserved "
                f"for {reserved} pod{'' if reserved == 1 else 's'}); to resize it, suspend it "
                "in the same update (spec.suspend: true), and kuota releases the quota and "
                "queues it again with the new value",
                origin="K",
                rule="JOB-K2",
            )
        )


def validate_job(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespace_has_default_queue: bool = False,
    managed: bool = False,
    by_scheduler: bool = False,
) -> list[FieldError]:
    """Every batch/v1 Job rule (CREATE, or UPDATE when ``old`` is given): pure, never raises.

    ``namespace_has_default_queue`` tells JOB-U2 whether the Job's namespace
    has a LocalQueue named ``default`` (the caller looks it up).  ``managed``
    (kuota manages this Job) and ``by_scheduler`` (the request comes from
    kuota's scheduler) decide whether JOB-K2 applies: to a managed Job,
    updated by anyone else.
    """
    errors: list[FieldError] = []
    obj = prepare(new, JOB, errors)
    if obj is None:
        return errors
    errors = [
        item for item in errors if item.rule != "UNKNOWN-FIELD"
    ]  # the Job schema is not kuota's
    old_obj = prepare_old(old, JOB)
    check_metadata(obj, errors, namespaced=True)
    check_job_labels(obj, errors)
    _check_batch_annotations(obj, old_obj, errors)
    if old_obj is not None:
        check_job_update(
            obj,
            old_obj,
            errors,
            namespace_has_default_queue=namespace_has_default_queue,
            job_specific=True,
        )
        if managed and not by_scheduler:
            check_admitted_quota(obj, old_obj, errors)
    return in_rule_order(errors, RULE_ORDER)
