"""The ``workload.codeflare.dev/appwrapper`` integration: AppWrappers (``v1beta2``).

A queued AppWrapper is created suspended (``spec.suspend``) and admitted as
one Workload whose pod sets are its components' (:mod:`.components`).
Starting writes each pod set's placement into its component's
``podSetInfos`` and unsuspends it; the AppWrapper controller then creates
the wrapped objects with it.  A stop suspends it again (its controller
deletes what it created) and clears the ``podSetInfos``.  As Kueue does
(docs/concepts.md#appwrapper):

- finished when ``status.phase`` is ``Succeeded``, or ``Failed`` once its
  resources are gone (``ResourcesDeployed`` no longer True);
- it runs something while ``QuotaReserved`` (the controller's condition) is
  True; its pods are ready with ``PodsReady``;
- the rules are the ones every kind shares, "suspended" being
  ``spec.suspend``, and a declared pod set's TAS sub-group count is a
  positive integer (:mod:`.validation`); the objects it wraps are checked by
  the AppWrapper controller's own webhook.

The objects the AppWrapper controller creates (a Job, a Deployment, ...)
are owned by the AppWrapper and left to it (docs/concepts.md#supported-job-kinds).
Every method is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.jobs.appwrapper import components
from scheduler.jobs.appwrapper.validation import validate_appwrapper
from scheduler.jobs.multikueue_copy import CopiedWhole, condition_false
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    with_queue_label,
)
from scheduler.jobs.spec_suspend import SuspendedBySpec

APPWRAPPER_FRAMEWORK: Final = "workload.codeflare.dev/appwrapper"


def is_suspended(aw: Mapping[str, Any]) -> bool:
    spec = aw.get("spec")
    return isinstance(spec, Mapping) and spec.get("suspend") is True


def _pod_set_info(info: PodSetInfo) -> dict[str, Any]:
    """One ``podSetInfos`` entry: the placement the AppWrapper controller applies."""
    entry: dict[str, Any] = {}
    if info.annotations:
        entry["annotations"] = dict(info.annotations)
    if info.labels:
        entry["labels"] = dict(info.labels)
    if info.node_selector:
        entry["nodeSelector"] = dict(info.node_selector)
    if info.tolerations:
        entry["tolerations"] = [dict(toleration) for toleration in info.tolerations]
    if info.scheduling_gates:
        entry["schedulingGates"] = [{"name": name} for name in info.scheduling_gates]
    return entry


class AppWrapper(SuspendedBySpec, CopiedWhole):
    """The ``workload.codeflare.dev/appwrapper`` integration (every method pure)."""

    framework = APPWRAPPER_FRAMEWORK
    api_version = "workload.codeflare.dev/v1beta2"
    kind = "AppWrapper"
    group = "workload.codeflare.dev"
    resource = "appwrappers"
    access = ApiAccess(
        scheduler={"appwrappers": ("list", "watch", "patch")},
        # The owner chain of a created object: a wrapped Job is the AppWrapper's.
        webhook={"appwrappers": ("get",)},
        multikueue={"appwrappers": ("get",), "appwrappers/status": ("patch",)},
    )

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """``QuotaReserved`` False once the copy is gone (what ``active`` reads)."""
        return condition_false(status, "QuotaReserved", "Suspended")

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        try:
            return components.pod_sets(job)
        except components.PathError:
            return []

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        by_name = {info.name: info for info in pod_sets}
        try:
            names = components.pod_set_names(job)
        except components.PathError:
            names = []
        infos = [
            _pod_set_info(by_name[name]) if name is not None and name in by_name else {}
            for name in names
        ]
        result = components.with_pod_set_infos(job, infos)
        result.setdefault("spec", {})["suspend"] = False
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The wrapped templates were never changed: only the ``podSetInfos`` go."""
        return components.without_pod_set_infos(job)

    def finished(self, job: RawObject) -> FinishedState:
        phase = objects.status(job).get("phase")
        if phase == "Succeeded":
            return FinishedState(True, "Succeeded", "AppWrapper finished successfully")
        if phase == "Failed" and not objects.is_true(job, "ResourcesDeployed"):
            return FinishedState(True, "Failed", "AppWrapper failed")
        return FinishedState(False)

    def active(self, job: RawObject) -> int:
        """1 while the AppWrapper controller holds its components (``QuotaReserved``)."""
        return 1 if objects.is_true(job, "QuotaReserved") else 0

    def pods_ready(self, job: RawObject) -> bool:
        return objects.is_true(job, "PodsReady")

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_appwrapper(job, None, suspended_when=is_suspended)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_appwrapper(
            job,
            old,
            namespace_has_default_queue=facts.namespace_has_default_queue,
            suspended_when=is_suspended,
        )


APPWRAPPER: Final = AppWrapper()

__all__ = ["APPWRAPPER", "APPWRAPPER_FRAMEWORK", "AppWrapper", "is_suspended"]
