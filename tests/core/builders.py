"""Fluent builders of test objects: raw v1beta2 dicts parsed by ``scheduler.api.parse``.

``cluster_queue("cq").cohort("x").resource_group(flavor_quotas("on-demand", cpu="9")).build()``
reads like the manifest it stands for; extend a builder rather than copying a dict.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler.api.parse import parse_object

API = "kueue.x-k8s.io/v1beta2"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(seconds: int) -> str:
    """An RFC 3339 timestamp ``seconds`` after T0."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def quota(
    nominal: str, *, borrowing_limit: str | None = None, lending_limit: str | None = None
) -> dict[str, str]:
    item = {"nominalQuota": nominal}
    if borrowing_limit is not None:
        item["borrowingLimit"] = borrowing_limit
    if lending_limit is not None:
        item["lendingLimit"] = lending_limit
    return item


def flavor_quotas(
    name: str, resources: dict[str, Any] | None = None, **by_name: Any
) -> dict[str, Any]:
    """One flavor of a resource group; values are a nominal quota string or ``quota(...)``."""
    items = {**(resources or {}), **by_name}
    return {
        "name": name,
        "resources": [
            {"name": resource, **(value if isinstance(value, dict) else {"nominalQuota": value})}
            for resource, value in items.items()
        ],
    }


class _Builder:
    kind = ""

    def __init__(self, name: str, namespace: str | None = None) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API,
            "kind": self.kind,
            "metadata": {"name": name},
        }
        if namespace is not None:
            self.raw["metadata"]["namespace"] = namespace

    def build(self) -> Any:
        return parse_object(self.raw)


class flavor(_Builder):  # noqa: N801 - reads like a manifest
    kind = "ResourceFlavor"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {}

    def labels(self, **labels: str) -> flavor:
        self.raw["spec"].setdefault("nodeLabels", {}).update(labels)
        return self

    def taint(self, key: str, value: str, effect: str = "NoSchedule") -> flavor:
        self.raw["spec"].setdefault("nodeTaints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def toleration(
        self, key: str, value: str = "", operator: str = "Equal", effect: str = ""
    ) -> flavor:
        item = {"key": key, "operator": operator, "effect": effect}
        if operator == "Equal":
            item["value"] = value
        self.raw["spec"].setdefault("tolerations", []).append(item)
        return self


def _groups(groups: tuple[tuple[dict[str, Any], ...], ...]) -> list[dict[str, Any]]:
    return [
        {
            "coveredResources": [item["name"] for item in flavors[0]["resources"]],
            "flavors": list(flavors),
        }
        for flavors in groups
    ]


class cluster_queue(_Builder):  # noqa: N801
    kind = "ClusterQueue"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {"namespaceSelector": {}}
        self._groups: list[tuple[dict[str, Any], ...]] = []

    def cohort(self, name: str) -> cluster_queue:
        self.raw["spec"]["cohortName"] = name
        return self

    def resource_group(self, *flavors: dict[str, Any]) -> cluster_queue:
        self._groups.append(flavors)
        self.raw["spec"]["resourceGroups"] = _groups(tuple(self._groups))
        return self

    def strict_fifo(self) -> cluster_queue:
        self.raw["spec"]["queueingStrategy"] = "StrictFIFO"
        return self

    def namespace_selector(self, selector: dict[str, Any] | None) -> cluster_queue:
        if selector is None:
            self.raw["spec"].pop("namespaceSelector", None)
        else:
            self.raw["spec"]["namespaceSelector"] = selector
        return self

    def stop_policy(self, policy: str) -> cluster_queue:
        self.raw["spec"]["stopPolicy"] = policy
        return self

    def fungibility(
        self,
        *,
        when_can_borrow: str | None = None,
        when_can_preempt: str | None = None,
        preference: str | None = None,
    ) -> cluster_queue:
        item: dict[str, str] = {}
        if when_can_borrow:
            item["whenCanBorrow"] = when_can_borrow
        if when_can_preempt:
            item["whenCanPreempt"] = when_can_preempt
        if preference:
            item["preference"] = preference
        self.raw["spec"]["flavorFungibility"] = item
        return self

    def preemption(self, **policy: Any) -> cluster_queue:
        self.raw["spec"]["preemption"] = policy
        return self

    def weight(self, value: str) -> cluster_queue:
        """``spec.fairSharing.weight``."""
        self.raw["spec"]["fairSharing"] = {"weight": value}
        return self

    def admission_checks(self, *names: str) -> cluster_queue:
        self.raw["spec"]["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": n} for n in names]
        }
        return self


class cohort(_Builder):  # noqa: N801
    kind = "Cohort"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {}
        self._groups: list[tuple[dict[str, Any], ...]] = []

    def parent(self, name: str) -> cohort:
        self.raw["spec"]["parentName"] = name
        return self

    def resource_group(self, *flavors: dict[str, Any]) -> cohort:
        self._groups.append(flavors)
        self.raw["spec"]["resourceGroups"] = _groups(tuple(self._groups))
        return self

    def weight(self, value: str) -> cohort:
        """``spec.fairSharing.weight``."""
        self.raw["spec"]["fairSharing"] = {"weight": value}
        return self


class local_queue(_Builder):  # noqa: N801
    kind = "LocalQueue"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {}

    def cluster_queue(self, name: str) -> local_queue:
        self.raw["spec"]["clusterQueue"] = name
        return self

    def stop_policy(self, policy: str) -> local_queue:
        self.raw["spec"]["stopPolicy"] = policy
        return self


class workload(_Builder):  # noqa: N801
    kind = "Workload"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["metadata"]["creationTimestamp"] = at(0)
        self.raw["metadata"]["uid"] = f"uid-{name}"
        self.raw["spec"] = {"podSets": []}

    def queue(self, name: str) -> workload:
        self.raw["spec"]["queueName"] = name
        return self

    def priority(self, value: int) -> workload:
        self.raw["spec"]["priority"] = value
        return self

    def priority_class(self, name: str, kind: str = "WorkloadPriorityClass") -> workload:
        group = "kueue.x-k8s.io" if kind == "WorkloadPriorityClass" else "scheduling.k8s.io"
        self.raw["spec"]["priorityClassRef"] = {"group": group, "kind": kind, "name": name}
        return self

    def created(self, seconds: int) -> workload:
        self.raw["metadata"]["creationTimestamp"] = at(seconds)
        return self

    def inactive(self) -> workload:
        self.raw["spec"]["active"] = False
        return self

    def annotate(self, **annotations: str) -> workload:
        self.raw["metadata"].setdefault("annotations", {}).update(annotations)
        return self

    def pod_set(
        self,
        name: str = "main",
        count: int = 1,
        requests: dict[str, str] | None = None,
        **by_name: str,
    ) -> workload:
        container = {
            "name": "c",
            "image": "busybox",
            "resources": {"requests": {**(requests or {}), **by_name}},
        }
        self.raw["spec"]["podSets"].append(
            {"name": name, "count": count, "template": {"spec": {"containers": [container]}}}
        )
        return self

    def min_count(self, value: int) -> workload:
        """``minCount`` of the last pod set (partial admission)."""
        self.raw["spec"]["podSets"][-1]["minCount"] = value
        return self

    def _pod_spec(self) -> dict[str, Any]:
        return self.raw["spec"]["podSets"][-1]["template"]["spec"]  # type: ignore[no-any-return]

    def toleration(
        self, key: str, value: str = "", operator: str = "Equal", effect: str = ""
    ) -> workload:
        item = {"key": key, "operator": operator, "effect": effect}
        if operator == "Equal":
            item["value"] = value
        self._pod_spec().setdefault("tolerations", []).append(item)
        return self

    def node_selector(self, **labels: str) -> workload:
        self._pod_spec().setdefault("nodeSelector", {}).update(labels)
        return self

    def required_affinity(self, *terms: list[tuple[str, str, list[str]]]) -> workload:
        self._pod_spec()["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": k, "operator": op, "values": vals} for k, op, vals in term
                            ]
                        }
                        for term in terms
                    ]
                }
            }
        }
        return self

    def job_uid(self, uid: str) -> workload:
        """The ``kueue.x-k8s.io/job-uid`` label."""
        self.raw["metadata"].setdefault("labels", {})["kueue.x-k8s.io/job-uid"] = uid
        return self

    def admitted(self, cq: str, *assignments: dict[str, Any], reserved: int = 0) -> workload:
        """Holding quota since ``reserved`` seconds after T0.

        ``assignments`` are podSetAssignments dicts.
        """
        self.raw["status"] = {
            "admission": {"clusterQueue": cq, "podSetAssignments": list(assignments)},
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": f"Quota reserved in ClusterQueue {cq}",
                    "lastTransitionTime": at(reserved),
                }
            ],
        }
        return self

    def running(self, cq: str, flavor_name: str = "default", *, reserved: int = 0) -> workload:
        """Admitted in ``cq`` with every resource of its single pod set in ``flavor_name``."""
        pod_set = self.raw["spec"]["podSets"][-1]
        requests = pod_set["template"]["spec"]["containers"][0]["resources"]["requests"]
        count = pod_set["count"]
        usage = {name: _times(value, count) for name, value in requests.items()}
        return self.admitted(
            cq,
            assignment(
                {name: flavor_name for name in requests}, usage, name=pod_set["name"], count=count
            ),
            reserved=reserved,
        )


def _times(value: str, count: int) -> str:
    from scheduler.api.quantity import Quantity

    return str(Quantity.parse(value) * count)


def assignment(
    flavors: dict[str, str], usage: dict[str, str], *, name: str = "main", count: int = 1
) -> dict[str, Any]:
    return {"name": name, "flavors": flavors, "resourceUsage": usage, "count": count}


def priority_class(name: str, value: int) -> Any:
    return parse_object(
        {
            "apiVersion": API,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
    )
