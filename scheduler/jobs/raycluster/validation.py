"""Rules of kuota's validating webhook for the Ray kinds (docs/validation.md#jobs).

Kueue's RayCluster, RayJob and RayService webhooks (v0.19) run the rules
every kind shares (JOB-1 … JOB-4, JOB-11, JOB-12 on create; JOB-U1 … JOB-U6,
JOB-U10, JOB-U11 on update, "suspended" being where the kind keeps it), and,
for a queued object, the rules of its cluster spec (:func:`check_cluster_spec`:
no autoscaling but for an elastic object, at most 18 pod sets, no worker
group named ``head``).  An
update of an object that is not queued and was not is not judged at all
(Kueue's ``ShouldValidateRayOrSparkJobOnUpdate``).  The kinds' own rules (a
RayJob's) are passed in.  Everything here is pure and never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath
from scheduler.api.objects import queue_name
from scheduler.api.validation.common import in_rule_order
from scheduler.jobs.job_rules import RULE_ORDER as SHARED_ORDER
from scheduler.jobs.job_rules import is_elastic, validate_job_kind
from scheduler.jobs.protocol import NO_FACTS, AdmissionFacts, RawObject, with_queue_label
from scheduler.jobs.raycluster.cluster_spec import check_cluster_spec

RULE_ORDER: Final = [
    *[rule for rule in SHARED_ORDER if rule != "UNKNOWN-FIELD"],
    "RAYJOB-1",
    "RAYJOB-2",
    "RAYJOB-3",
    "RAY-1",
    "RAY-2",
    "RAY-3",
]

KindRules = Callable[[Mapping[str, Any], list[FieldError], AdmissionFacts], None]
"""The rules of a queued object of one kind (its cluster spec's included)."""


def cluster_rules(
    spec_of: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
    at: FieldPath,
) -> KindRules:
    """The cluster-spec rules of a kind whose spec ``spec_of`` finds at ``at``: pure.

    An elastic object (annotation and gate) may autoscale.
    """

    def check(obj: Mapping[str, Any], errors: list[FieldError], facts: AdmissionFacts) -> None:
        spec = spec_of(obj)
        if spec is not None:
            elastic = facts.elastic_jobs and is_elastic(obj)
            check_cluster_spec(spec, at, errors, elastic=elastic)

    return check


def validate_ray_kind(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    kind_rules: KindRules,
    suspended_when: Callable[[Mapping[str, Any]], bool],
    facts: AdmissionFacts = NO_FACTS,
) -> list[FieldError]:
    """Every rule for a Ray object (CREATE, or UPDATE when ``old`` is given).

    ``facts.managed``: kuota manages the object without a queue name
    (``manageJobsWithoutQueueName``); a queued one always is.
    """
    managed = facts.managed
    if not isinstance(new, Mapping) or (old is not None and not isinstance(old, Mapping)):
        return validate_job_kind(new, old)  # not an object: the shape check says so
    if old is not None and not (managed or queue_name(new) or queue_name(old)):
        return []
    errors = validate_job_kind(
        new,
        old,
        namespace_has_default_queue=facts.namespace_has_default_queue if old is not None else False,
        suspended_when=suspended_when,
    )
    if managed or queue_name(new):
        kind_rules(new, errors, facts)
    return in_rule_order(errors, RULE_ORDER)


class RayAdmission:
    """The webhook's part every Ray kind shares (every method pure): the queue label, the
    suspension at creation, and :func:`validate_ray_kind` with the kind's own rules.

    A kind has ``is_suspended``, ``suspend`` and ``kind_rules`` (its own rules).
    """

    def kind_rules(
        self, job: Mapping[str, Any], errors: list[FieldError], facts: AdmissionFacts
    ) -> None:
        raise NotImplementedError

    def is_suspended(self, job: RawObject) -> bool:
        raise NotImplementedError

    def suspend(self, job: RawObject) -> dict[str, Any]:
        raise NotImplementedError

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_ray_kind(
            job, None, kind_rules=self.kind_rules, suspended_when=self.is_suspended, facts=facts
        )

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_ray_kind(
            job, old, kind_rules=self.kind_rules, suspended_when=self.is_suspended, facts=facts
        )
