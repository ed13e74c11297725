"""The small protocol every Job integration implements (DESIGN.md, layer 2).

Kueue manages many kinds of batch jobs (batch/v1 Job first, JobSet next) with
one controller; what differs between kinds is captured here as a handful of
pure functions over the raw object (a ``dict`` as read from the API or a YAML
file): which queue it asks for, which pod sets it needs, whether it is
suspended, how to start it on the admitted flavors, how to restore it after
an eviction, and whether it has finished.  Every function returns new data
and never mutates its argument, so the webhook, the scheduler's reconciler and
``kuota simulate`` can share them without coordination.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

RawObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PodSetInfo:
    """What the admission adds to one pod set when the job starts (scheduling.md 6.3)."""

    name: str
    count: int
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FinishedState:
    """Whether the job is done, and how (for the Workload's ``Finished`` condition)."""

    finished: bool
    reason: str = ""
    message: str = ""


@runtime_checkable
class JobIntegration(Protocol):
    """One kind of batch job, as Kueue sees it.  Every method is pure."""

    framework: str
    """The name used in the Configuration's ``integrations.frameworks`` (``batch/job``)."""
    api_version: str
    kind: str
    group: str

    def queue_name(self, job: RawObject) -> str:
        """The LocalQueue the job asks for, ``""`` when none."""
        ...

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        """The raw v1beta2 ``spec.podSets`` of the job's Workload."""
        ...

    def is_suspended(self, job: RawObject) -> bool: ...

    def suspend(self, job: RawObject) -> dict[str, Any]:
        """A copy of the job, suspended."""
        ...

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        """A copy of the job, unsuspended and steered to the admitted flavors."""
        ...

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A copy of the job with the pod templates recorded in its Workload put back."""
        ...

    def finished(self, job: RawObject) -> FinishedState: ...
