"""batch/v1 Job rules of kuota's validating webhook (docs/validation.md#jobs).

The rules every job kind shares (JOB-1 … JOB-4, JOB-11, JOB-12, JOB-U1 …
JOB-U6, JOB-U10, JOB-U11) are :mod:`scheduler.jobs.job_rules`; a Job adds
its partial-admission and completions annotations (JOB-5 … JOB-10, JOB-U7 …
JOB-U9) and kuota's JOB-K2.

**JOB-K2** (kuota's own rule) guards the quota of a running Job.  A
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

**Elastic Jobs** (annotation ``kueue.x-k8s.io/elastic-job: "true"``, gate
``ElasticJobsViaWorkloadSlices`` on, as Kueue has it by default) may change
their size while they run: the scheduler lowers the Workload's count in place
on a scale-down, and admits a new workload slice on a scale-up
(docs/concepts.md#elastic-jobs); one that MultiKueue dispatched to a worker
cluster keeps its size (JOB-K3).  Kueue's own elastic rules are here too:
partial admission and elastic jobs cannot be combined (JOB-7), and an
elastic Job asks for no required or preferred topology (JOB-13).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION as ELASTIC_JOB
from scheduler.api.refs import (
    JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION as COMPLETIONS_EQUAL_PARALLELISM,
)
from scheduler.api.refs import JOB_MIN_PARALLELISM_ANNOTATION as MIN_PARALLELISM
from scheduler.api.refs import MULTIKUEUE_CONTROLLER
from scheduler.api.validation.common import in_rule_order, numbered, prepare, prepare_old
from scheduler.api.validation.formats import as_dict, check_metadata
from scheduler.api.validation.known_fields import JOB
from scheduler.jobs import job_rules as rules
from scheduler.jobs.topology import PREFERRED, REQUIRED
from scheduler.jobs.topology_rules import RULES as TOPOLOGY_RULES
from scheduler.jobs.topology_rules import check_topology_annotations

ANNOTATIONS = rules.ANNOTATIONS
RULE_ORDER = (
    numbered("JOB", 13)
    + TOPOLOGY_RULES
    + [f"JOB-U{n}" for n in range(1, 12)]
    + ["JOB-K2", "JOB-K3", "UNKNOWN-FIELD"]
)
ELASTIC_DOCS = "docs/api-differences.md#elastic-jobs"
"""Where kuota's docs say what of elastic jobs kuota does (named by the refusals)."""
TEMPLATE_ANNOTATIONS = FieldPath(("spec", "template", "metadata", "annotations"))
QUOTA_FIELDS = ("parallelism", "completions")
"""The fields of ``spec`` a running Job's quota reservation depends on (JOB-K2)."""


def _pod_count(spec: Mapping[str, Any]) -> int:
    raw_parallelism = spec.get("parallelism")
    parallelism = raw_parallelism if isinstance(raw_parallelism, int) else 1
    completions = spec.get("completions")
    return min(parallelism, completions) if isinstance(completions, int) else parallelism


def check_batch_annotations(
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    errors: list[FieldError],
    *,
    elastic_jobs: bool = True,
) -> None:
    """JOB-5 … JOB-10 (JOB-5/6/7 on update only when the annotation changed: JOB-U9)."""
    annotations, spec = rules.annotations_of(obj), as_dict(obj.get("spec"))
    minimum = annotations.get(MIN_PARALLELISM)
    changed = old is None or rules.annotations_of(old).get(MIN_PARALLELISM) != minimum
    if isinstance(minimum, str) and changed:
        at = ANNOTATIONS.key(MIN_PARALLELISM)
        count = _pod_count(spec)
        if rules.INT_RE.fullmatch(minimum) is None:
            errors.append(error(at, f'"{minimum}" is not an integer', rule="JOB-5"))
        elif not 0 < int(minimum) < count:
            errors.append(
                error(
                    at,
                    f"must be between 1 and {count - 1} (the job runs {count} pods)",
                    rule="JOB-6",
                )
            )
        if elastic_jobs and rules.is_elastic(obj):
            errors.append(
                error(at, "partial admission and elastic jobs cannot be combined", rule="JOB-7")
            )
    equal = annotations.get(COMPLETIONS_EQUAL_PARALLELISM)
    if isinstance(equal, str):
        at = ANNOTATIONS.key(COMPLETIONS_EQUAL_PARALLELISM)
        enabled = rules.as_bool(equal)
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


def check_batch_update(obj: dict[str, Any], old: dict[str, Any], errors: list[FieldError]) -> None:
    """JOB-U7, JOB-U8: the update rules of Jobs alone."""
    suspended, was_suspended = rules.is_suspended(obj), rules.is_suspended(old)
    spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
    if (
        MIN_PARALLELISM in rules.annotations_of(old)
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
        rules.as_bool(rules.annotations_of(item).get(COMPLETIONS_EQUAL_PARALLELISM)) or False
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


def check_elastic_topology(
    obj: dict[str, Any], errors: list[FieldError], *, elastic_jobs: bool
) -> None:
    """JOB-13: an elastic Job asks for no required or preferred topology (Kueue's rule): pure.

    Skipped when the topology annotations are already wrong (TAS-*), as Kueue
    reports those alone.
    """
    if not elastic_jobs or not rules.is_elastic(obj):
        return
    if any(item.rule is not None and item.rule.startswith("TAS-") for item in errors):
        return
    template = as_dict(as_dict(obj.get("spec")).get("template"))
    annotations = as_dict(as_dict(template.get("metadata")).get("annotations"))
    for key, mode in ((REQUIRED, "required"), (PREFERRED, "preferred")):
        if key in annotations:
            errors.append(
                error(
                    TEMPLATE_ANNOTATIONS.key(key),
                    f"{mode} topology is not supported with elastic jobs",
                    rule="JOB-13",
                )
            )
            return


def _finished(obj: Mapping[str, Any]) -> bool:
    return objects.is_true(obj, "Complete") or objects.is_true(obj, "Failed")


def check_admitted_quota(
    obj: Mapping[str, Any],
    old: Mapping[str, Any],
    errors: list[FieldError],
    *,
    elastic_jobs: bool = True,
) -> None:
    """JOB-K2, JOB-K3 for a Job kuota manages, updated by someone other than its scheduler.

    Pure.  An elastic Job (with the gate on) may change its pod count, unless
    MultiKueue dispatched it to a worker cluster (JOB-K3).
    """
    if rules.is_suspended(obj) or rules.is_suspended(old) or _finished(old):
        return
    spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
    reserved = _pod_count(old_spec)
    if elastic_jobs and rules.is_elastic(old):
        if old_spec.get("managedBy") != MULTIKUEUE_CONTROLLER:
            return  # down in place, up as a new workload slice (docs/concepts.md#elastic-jobs)
        changed = next((n for n in QUOTA_FIELDS if spec.get(n) != old_spec.get(n)), None)
        if changed is not None:
            errors.append(
                error(
                    FieldPath(("spec", changed)),
                    "cannot change while the job runs on a worker cluster (spec.managedBy: "
                    f"{MULTIKUEUE_CONTROLLER}): kuota does not resize an elastic job that "
                    "MultiKueue dispatched; suspend it in the same update (spec.suspend: true), "
                    f"and kuota queues it again with the new value, see {ELASTIC_DOCS}",
                    origin="K",
                    rule="JOB-K3",
                )
            )
        return
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
                "queues it again with the new value; a job created with the annotation "
                f'{ELASTIC_JOB}: "true" may change its size while it runs, see {ELASTIC_DOCS}',
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
    elastic_jobs: bool = True,
) -> list[FieldError]:
    """Every batch/v1 Job rule (CREATE, or UPDATE when ``old`` is given): pure, never raises.

    ``namespace_has_default_queue`` tells JOB-U2 whether the Job's namespace
    has a LocalQueue named ``default`` (the caller looks it up).  ``managed``
    (kuota manages this Job) and ``by_scheduler`` (the request comes from
    kuota's scheduler) decide whether JOB-K2 and JOB-K3 apply: to a managed
    Job, updated by anyone else.  ``elastic_jobs``: the gate
    ``ElasticJobsViaWorkloadSlices`` (JOB-7, JOB-13, JOB-K2, JOB-K3).
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
    rules.check_job_labels(obj, errors)
    check_batch_annotations(obj, old_obj, errors, elastic_jobs=elastic_jobs)
    template = as_dict(as_dict(obj.get("spec")).get("template"))
    check_topology_annotations(
        as_dict(as_dict(template.get("metadata")).get("annotations")),
        TEMPLATE_ANNOTATIONS,
        errors,
        count=_pod_count(as_dict(obj.get("spec"))),
    )
    check_elastic_topology(obj, errors, elastic_jobs=elastic_jobs)
    if old_obj is not None:
        rules.check_job_update(
            obj, old_obj, errors, namespace_has_default_queue=namespace_has_default_queue
        )
        check_batch_update(obj, old_obj, errors)
        if managed and not by_scheduler:
            check_admitted_quota(obj, old_obj, errors, elastic_jobs=elastic_jobs)
    return in_rule_order(errors, RULE_ORDER)
