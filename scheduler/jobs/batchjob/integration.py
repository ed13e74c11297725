"""The ``batch/job`` integration: Kubernetes ``batch/v1`` Jobs.

A Job is one pod set named ``main`` whose size is the number of pods that run
at once: ``min(parallelism, completions)``, ``parallelism`` defaulting to 1 and
unset ``completions`` meaning "as many as parallelism"
(docs/concepts.md#from-job-to-workload).  The queue is the
``kueue.x-k8s.io/queue-name`` label, or the legacy annotation of the same key
when the label is absent or empty.  Starting a Job unsuspends it and adds the
admitted flavor's node labels to its pod template
(docs/concepts.md#how-a-job-is-suspended-admitted-and-started); restoring puts
the template recorded in the Workload back.

Finished pods give their quota back (docs/concepts.md#reclaimable-pods, Kueue's
``ReclaimablePods`` for a Job): once fewer pods remain to run than
``parallelism``, the difference is reclaimable; the terminal pods are
``status.succeeded``, or for an Indexed Job the completed and failed indexes
below ``completions`` (counted once).

Partial admission (docs/scheduling.md#partial-admission, annotation
``kueue.x-k8s.io/job-min-parallelism``): the Workload's pod set keeps the Job's
full count and a ``minCount``; the admission may record fewer pods, and the Job
then runs with ``parallelism`` set to the admitted count (``completions`` too
only when ``kueue.x-k8s.io/job-completions-equal-parallelism`` is true).
Restoring sets ``parallelism`` back to the Workload's count, so the Job is
queued again at its full size.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.api.refs import (
    JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION,
    JOB_MIN_PARALLELISM_ANNOTATION,
)
from scheduler.jobs import pod_template, topology
from scheduler.jobs.batchjob.multikueue import remote_job, stopped_status
from scheduler.jobs.batchjob.validation import validate_job
from scheduler.jobs.multikueue_copy import SPEC_MANAGED_BY
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    ReclaimableCount,
    finished_by_conditions,
    with_queue_label,
)
from scheduler.jobs.spec_suspend import SuspendedBySpec, unsuspended

MAIN_POD_SET: Final = "main"
CONTROLLER_MANAGED_LABELS: Final = (
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
)
"""Labels the job controller puts on pod templates; they never reach the Workload."""


_mapping = pod_template.mapping


def _spec(job: RawObject) -> Mapping[str, Any]:
    return _mapping(job.get("spec"))


def pod_count(job: RawObject) -> int:
    """``min(parallelism, completions)``; parallelism defaults to 1: pure."""
    spec = _spec(job)
    parallelism = spec.get("parallelism")
    parallelism = (
        parallelism if isinstance(parallelism, int) and not isinstance(parallelism, bool) else 1
    )
    completions = spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        return min(parallelism, completions)
    return parallelism


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _index_intervals(text: object, limit: int) -> list[tuple[int, int]]:
    """``"1,3-5"`` as inclusive intervals, cut below ``limit``; malformed ones skipped: pure."""
    intervals = []
    for part in text.split(",") if isinstance(text, str) and text else []:
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        low, high = int(first), int(last) if last else int(first)
        high = min(high, limit - 1)
        if low <= high:
            intervals.append((low, high))
    return intervals


def terminal_indexes(completed: object, failed: object, completions: int) -> int:
    """How many distinct indexes below ``completions`` completed or failed: pure.

    The union is counted (an older API server may list an index in both).
    """
    if completions <= 0:
        return 0
    counted, last = 0, -1
    for low, high in sorted(
        _index_intervals(completed, completions) + _index_intervals(failed, completions)
    ):
        start = max(low, last + 1)
        if start <= high:
            counted += high - start + 1
            last = high
    return counted


def reclaimable_count(job: RawObject) -> int:
    """Pods of the Job whose quota is no longer needed (docs/concepts.md#reclaimable-pods): pure.

    ``parallelism - remaining`` once ``remaining = completions - terminal``
    is below ``parallelism``; 0 for a one-pod Job or before any pod ended.
    """
    spec, status = _spec(job), objects.status(job)
    parallelism = _int(spec.get("parallelism"), 1)
    completions = _int(spec.get("completions"), parallelism)
    if spec.get("completionMode") == "Indexed":
        terminal = terminal_indexes(
            status.get("completedIndexes"), status.get("failedIndexes"), completions
        )
    else:
        terminal = _int(status.get("succeeded"), 0)
    if parallelism <= 1 or terminal <= 0:
        return 0
    remaining = max(completions - terminal, 0)
    return parallelism - remaining if remaining < parallelism else 0


def min_count(job: RawObject) -> int | None:
    """The partial-admission minimum from the ``job-min-parallelism`` annotation: pure."""
    value = objects.annotations(job).get(JOB_MIN_PARALLELISM_ANNOTATION)
    if not isinstance(value, str):
        return None
    try:
        parsed = int(value)
    except ValueError:
        return None
    return parsed if 0 < parsed < pod_count(job) else None


def completions_follow_parallelism(job: RawObject) -> bool:
    """``kueue.x-k8s.io/job-completions-equal-parallelism`` is true (Go's ParseBool): pure."""
    value = objects.annotations(job).get(JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION)
    return value in ("1", "t", "T", "TRUE", "true", "True")


def _set_parallelism(job: RawObject, spec: dict[str, Any], count: int) -> None:
    """Partial admission's resize (start and restore): completions follow when annotated."""
    spec["parallelism"] = count
    if completions_follow_parallelism(job):
        spec["completions"] = count


def workload_template(job: RawObject) -> dict[str, Any]:
    """The Job's pod template without the job-controller-managed labels: pure."""
    template = copy.deepcopy(dict(_mapping(_spec(job).get("template"))))
    metadata = template.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("labels"), dict):
        labels = {
            key: value
            for key, value in metadata["labels"].items()
            if key not in CONTROLLER_MANAGED_LABELS
        }
        if labels:
            metadata["labels"] = labels
        else:
            del metadata["labels"]
    return template


class BatchJob(SuspendedBySpec):
    """The ``batch/job`` integration (every method pure)."""

    framework = "batch/job"
    api_version = "batch/v1"
    kind = "Job"
    group = "batch"
    resource = "jobs"
    access = ApiAccess(
        # Watch, start and stop Jobs; a stopped Job's startTime is cleared through
        # jobs/status so its pod template may be restored; the Job of a Workload kuota
        # deactivated is deleted after afterDeactivatedByKueue (kube/retention.py).
        scheduler={"jobs": ("list", "watch", "patch", "delete"), "jobs/status": ("patch",)},
        # The owner chain of a created object (a managed ancestor leaves it alone).
        webhook={"jobs": ("get",)},
        # MultiKueue reads a Workload's Job and copies the worker's status back.
        multikueue={"jobs": ("get",), "jobs/status": ("patch",)},
    )

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        template = workload_template(job)
        pod_set: dict[str, Any] = {
            "name": MAIN_POD_SET,
            "count": pod_count(job),
            "template": template,
        }
        minimum = min_count(job)
        if minimum is not None:
            pod_set["minCount"] = minimum
        request = topology.topology_request(template, pod_index_label=topology.JOB_COMPLETION_INDEX)
        if request is not None:
            pod_set["topologyRequest"] = request
        return [pod_set]

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result, spec = unsuspended(job)
        info = next((item for item in pod_sets if item.name == MAIN_POD_SET), None)
        if info is None:
            return result
        if info.count < pod_count(job):
            # Partial admission: the admitted count runs at once; completions are
            # kept, so the Job still finishes its work, with fewer pods at a time.
            _set_parallelism(job, spec, info.count)
        pod_template.steer(spec.setdefault("template", {}), info)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Put back what the user wrote, keeping what the Job controller owns.

        See docs/concepts.md#eviction-and-restore.

        Labels, annotations, nodeSelector, tolerations and schedulingGates of
        the pod template are replaced wholesale by the Workload's record, so
        everything the admission added disappears and nothing the user had is
        lost; the Job controller's labels stay, since the Job's selector must
        keep matching its template.
        """
        result = copy.deepcopy(dict(job))
        main = next((item for item in pod_sets if item.get("name") == MAIN_POD_SET), None)
        if main is None:
            return result
        spec = result.setdefault("spec", {})
        template = spec.setdefault("template", {})
        owned = {
            k: v
            for k, v in _mapping(_mapping(template.get("metadata")).get("labels")).items()
            if k in (*CONTROLLER_MANAGED_LABELS, "batch.kubernetes.io/job-name")
        }
        pod_template.restore(template, _mapping(main.get("template")), kept_labels=owned)
        if isinstance(main.get("count"), int) and pod_count(result) != main["count"]:
            # The Workload keeps the count the Job asked for (a partial admission
            # cut only the running Job's parallelism): put it back.
            _set_parallelism(job, spec, main["count"])
        return result

    def finished(self, job: RawObject) -> FinishedState:
        return finished_by_conditions(job, succeeded="Complete", kind="Job")

    def pods_ready(self, job: RawObject) -> bool:
        """Kueue's rule: ready + succeeded (counted or not yet) pods >= the pod count: pure."""
        status = _mapping(job.get("status"))
        uncounted = _mapping(status.get("uncountedTerminatedPods")).get("succeeded")
        total = (
            _int(status.get("ready"))
            + _int(status.get("succeeded"))
            + (len(uncounted) if isinstance(uncounted, list) else 0)
        )
        return total >= pod_count(job)

    def reclaimable_pods(self, job: RawObject) -> list[ReclaimableCount]:
        count = reclaimable_count(job)
        return [ReclaimableCount(MAIN_POD_SET, count)] if count else []

    def start_time_blocks_restore(self, job: RawObject) -> bool:
        """A Job that ran (``status.startTime``) takes no template change until it is cleared."""
        return bool(objects.status(job).get("startTime"))

    def active(self, job: RawObject) -> int:
        """The Job's pods that have not stopped: ``status.active`` plus ``status.terminating``.

        A pod in its termination grace period is not active for the Job
        controller, but it still holds its node until it is gone.
        """
        status = objects.status(job)
        return sum(
            value
            for value in (status.get("active"), status.get("terminating"))
            if isinstance(value, int) and not isinstance(value, bool)
        )

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    managed_by_at = SPEC_MANAGED_BY

    def remote_copy(self, job: RawObject, workload_name: str, origin: str) -> dict[str, Any]:
        return remote_job(job, workload_name, origin)

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        return stopped_status(status)

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_job(job, None, elastic_jobs=facts.elastic_jobs)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_job(
            job,
            old,
            namespace_has_default_queue=facts.namespace_has_default_queue,
            managed=facts.managed,
            by_scheduler=facts.by_scheduler,
            elastic_jobs=facts.elastic_jobs,
        )


BATCH_JOB: Final = BatchJob()
