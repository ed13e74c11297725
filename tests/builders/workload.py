"""The Workload builder (``kueue.x-k8s.io/v1beta2``): pod sets, priority, admission and
status conditions, in the style of Kueue's ``MakeWorkload``::

    workload("w").queue("lq").priority(100).pod_set(count=3, cpu="1").min_count(2)
    workload("w").queue("lq").pod_set(cpu="2").reserve_quota("cq", flavor="spot").admitted()

A new Workload is as the API server returns a stored one: ``uid-<name>`` as uid and
:data:`~tests.builders.base.T0` as creationTimestamp (``uid(None)``/``created(None)``
leave them out), and no pod set until one is added.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self

from tests.builders.base import Built, at, raw
from tests.builders.kueue import KUEUE_GROUP, KueueObject
from tests.builders.pods import PodTemplate, container

JOB_UID = "kueue.x-k8s.io/job-uid"


class pod_set(Built, PodTemplate):  # noqa: N801 - reads like a manifest
    """One pod set: ``pod_set("workers", 4, cpu="1")`` (or ``.requests(cpu="1")``).

    ``name=None`` or ``count=None`` leaves the field out (as a user may write it; the
    API server defaults ``main`` and 1).  The template has one container ``c`` (image
    ``busybox``) with the requests given (a mapping for names like ``nvidia.com/gpu``).
    """

    def __init__(
        self,
        name: str | None = "main",
        count: Any = 1,
        requests: Mapping[str, Any] | None = None,
        **by_name: Any,
    ) -> None:
        self.raw = {}
        if name is not None:
            self.raw["name"] = name
        if count is not None:
            self.raw["count"] = count
        self.raw["template"] = {
            "spec": {"containers": [container(requests={**(requests or {}), **by_name})]}
        }

    def _template(self) -> dict[str, Any]:
        return self.raw.setdefault("template", {})  # type: ignore[no-any-return]

    def min_count(self, value: Any) -> Self:
        """``minCount`` (partial admission)."""
        self.raw["minCount"] = value
        return self

    def legacy(self) -> Self:
        """The v1alpha1/v1alpha2 form: the template's pod spec as ``spec``, no ``template``."""
        self.raw["spec"] = self.raw.pop("template", {}).get("spec", {})
        return self

    def topology_request(self, **fields: Any) -> Self:
        """``topologyRequest`` (``required="rack"``, ``podSetSliceSize=2``, ...)."""
        self.raw["topologyRequest"] = dict(fields)
        return self

    def template(self, template: dict[str, Any] | None) -> Self:
        """Replace the whole pod template (``None`` leaves it out)."""
        if template is None:
            self.raw.pop("template", None)
        else:
            self.raw["template"] = copy.deepcopy(template)
        return self


def assignment(
    flavors: Mapping[str, str],
    usage: Mapping[str, str],
    *,
    name: str | None = "main",
    count: int | None = 1,
) -> dict[str, Any]:
    """Pure: one ``status.admission.podSetAssignments`` entry."""
    item: dict[str, Any] = {} if name is None else {"name": name}
    item["flavors"] = dict(flavors)
    item["resourceUsage"] = dict(usage)
    if count is not None:
        item["count"] = count
    return item


def _times(value: Any, count: int) -> str:
    from scheduler.api.quantity import Quantity

    return str(Quantity.parse(str(value)) * count)


class workload(KueueObject):  # noqa: N801
    kind = "Workload"

    def __init__(self, name: str = "wl", namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.created(0).uid(f"uid-{name}")
        self.raw["spec"] = {"podSets": []}

    def as_written(self) -> Self:
        """The Workload as a user writes it, before the API server stores it: no uid, no
        creationTimestamp."""
        return self.uid(None).created(None)

    # -- spec ----------------------------------------------------------------------

    def queue(self, name: str) -> Self:
        self.raw["spec"]["queueName"] = name
        return self

    def priority(self, value: Any) -> Self:
        self.raw["spec"]["priority"] = value
        return self

    def priority_class(self, name: str, kind: str = "WorkloadPriorityClass") -> Self:
        group = KUEUE_GROUP if kind == "WorkloadPriorityClass" else "scheduling.k8s.io"
        self.raw["spec"]["priorityClassRef"] = {"group": group, "kind": kind, "name": name}
        return self

    def active(self, value: bool = True) -> Self:
        self.raw["spec"]["active"] = value
        return self

    def inactive(self) -> Self:
        return self.active(False)

    def job_uid(self, uid: str) -> Self:
        """The ``kueue.x-k8s.io/job-uid`` label."""
        return self.labels({JOB_UID: uid})

    def owned_by_job(self, name: str, uid: str) -> Self:
        """Owned by the batch/v1 Job ``name`` (owner reference and job-uid label)."""
        return self.owner("Job", name, uid).job_uid(uid)

    def pod_set(
        self,
        name: str | None = "main",
        count: Any = 1,
        requests: Mapping[str, Any] | None = None,
        **by_name: Any,
    ) -> Self:
        """Add a pod set; its one container requests ``requests`` and ``by_name``."""
        return self.pod_sets(pod_set(name, count, requests, **by_name), add=True)

    def pod_sets(self, *items: Any, add: bool = False) -> Self:
        """Set (or, ``add=True``, add) pod sets made with :class:`pod_set` (or raw)."""
        if not add:
            self.raw["spec"]["podSets"] = []
        self.raw["spec"]["podSets"].extend(raw(item) for item in items)
        return self

    def _last(self) -> pod_set:
        """A view of the last pod set, to change it in place."""
        view = pod_set.__new__(pod_set)
        view.raw = self.raw["spec"]["podSets"][-1]
        return view

    def min_count(self, value: Any) -> Self:
        """``minCount`` of the last pod set (partial admission)."""
        self._last().min_count(value)
        return self

    def topology_request(self, **fields: Any) -> Self:
        """The ``topologyRequest`` of the last pod set."""
        self._last().topology_request(**fields)
        return self

    def toleration(
        self, key: str, value: str = "", operator: str = "Equal", effect: str = ""
    ) -> Self:
        """A toleration of the last pod set."""
        self._last().toleration(key, value, operator, effect)
        return self

    def node_selector(self, labels: Mapping[str, str] | None = None, **by_name: str) -> Self:
        """The node selector of the last pod set."""
        self._last().node_selector(labels, **by_name)
        return self

    def required_affinity(self, *terms: list[tuple[str, str, list[str]]]) -> Self:
        """A required node affinity of the last pod set."""
        self._last().required_affinity(*terms)
        return self

    # -- status ---------------------------------------------------------------------

    def reserve_quota(
        self,
        cluster_queue: str,
        *assignments: dict[str, Any],
        flavor: str = "default",
        at: float | datetime | str = 0,
        message: str | None = None,
    ) -> Self:
        """Holding quota in ``cluster_queue`` since ``at`` (``QuotaReserved=True``).

        Without ``assignments``, every pod set is assigned ``flavor`` for all it requests.
        """
        if not assignments:
            assignments = tuple(self._assignment(item, flavor) for item in self.pod_sets_raw)
        self.admission(cluster_queue, *assignments)
        if message is None:
            message = f"Quota reserved in ClusterQueue {cluster_queue}"
        return self.condition("QuotaReserved", "True", message=message, at=at)

    def admission(self, cluster_queue: str, *assignments: dict[str, Any]) -> Self:
        """``status.admission`` alone, with no condition (see :meth:`reserve_quota`)."""
        self.raw.setdefault("status", {})["admission"] = {
            "clusterQueue": cluster_queue,
            "podSetAssignments": copy.deepcopy(list(assignments)),
        }
        return self

    def admitted(self, *, at: float | datetime | str = 0, message: str = "") -> Self:
        """``Admitted=True``: every admission check is ready."""
        return self.condition("Admitted", "True", message=message, at=at)

    def finished(
        self,
        reason: str = "Succeeded",
        message: str = "",
        *,
        at: float | datetime | str = 0,
    ) -> Self:
        return self.condition("Finished", "True", reason=reason, message=message, at=at)

    def evicted(
        self, reason: str = "Preempted", message: str = "", *, at: float | datetime | str = 0
    ) -> Self:
        return self.condition("Evicted", "True", reason=reason, message=message, at=at)

    def admission_check(
        self, name: str, state: str = "Pending", message: str | None = None, **fields: Any
    ) -> Self:
        """An entry of ``status.admissionChecks``."""
        item: dict[str, Any] = {"name": name, "state": state}
        if message is not None:
            item["message"] = message
        item.update(copy.deepcopy(fields))
        self.raw.setdefault("status", {}).setdefault("admissionChecks", []).append(item)
        return self

    @property
    def pod_sets_raw(self) -> list[dict[str, Any]]:
        return self.raw["spec"]["podSets"]  # type: ignore[no-any-return]

    @staticmethod
    def _assignment(item: dict[str, Any], flavor: str) -> dict[str, Any]:
        count = item.get("count", 1)
        containers = item.get("template", {}).get("spec", {}).get("containers", [])
        requests = containers[0].get("resources", {}).get("requests", {}) if containers else {}
        usage = {name: _times(value, count) for name, value in requests.items()}
        return assignment(
            {name: flavor for name in requests}, usage, name=item.get("name", "main"), count=count
        )


__all__ = ["assignment", "at", "pod_set", "workload"]
