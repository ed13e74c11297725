"""Builders of Kueue's kinds (``kueue.x-k8s.io/v1beta2``) but the Workload (``workload.py``).

In the style of Kueue's testing wrappers::

    resource_flavor("spot").node_labels({"instance-type": "spot"}).taint("spot", "true")
    cluster_queue("cq").cohort("c").resource_group(
        flavor_quotas("on-demand").resource("cpu", "9"), flavor_quotas("spot", cpu="9")
    )
    local_queue("lq", "team-a").cluster_queue("cq")

Each starts from the smallest object the API server accepts (a ClusterQueue has an empty
``namespaceSelector``, as ``kubectl apply`` of a manifest without one would store it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Self

from tests.builders.base import Built, ObjectBuilder, at, raw

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE = f"{KUEUE_GROUP}/v1beta2"


class KueueObject(ObjectBuilder):
    api_version = KUEUE

    def version(self, version: str) -> Self:
        """Another version of the kind: ``version("v1alpha1")``."""
        return self.api(f"{KUEUE_GROUP}/{version}")


class resource_flavor(KueueObject):  # noqa: N801 - reads like a manifest
    kind = "ResourceFlavor"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {}

    def node_labels(self, labels: Mapping[str, str] | None = None, **by_name: str) -> Self:
        self.raw["spec"].setdefault("nodeLabels", {}).update({**(labels or {}), **by_name})
        return self

    def taint(self, key: str, value: str, effect: str = "NoSchedule") -> Self:
        self.raw["spec"].setdefault("nodeTaints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def toleration(
        self, key: str, value: str = "", operator: str = "Equal", effect: str = ""
    ) -> Self:
        from tests.builders.pods import toleration

        self.raw["spec"].setdefault("tolerations", []).append(
            toleration(key, value, operator, effect)
        )
        return self

    def topology(self, name: str) -> Self:
        self.raw["spec"]["topologyName"] = name
        return self


class flavor_quotas(Built):  # noqa: N801
    """One flavor of a resource group: ``flavor_quotas("spot", cpu="9")`` or, with limits,
    ``flavor_quotas("spot").resource("cpu", "9", borrowing_limit="1")``."""

    def __init__(self, name: str | None, **nominal: Any) -> None:
        self.raw = {} if name is None else {"name": name}
        self.raw["resources"] = []
        for resource, value in nominal.items():
            self.resource(resource, value)

    def resource(
        self,
        name: str | None,
        nominal: Any = "1",
        *,
        borrowing_limit: Any = None,
        lending_limit: Any = None,
    ) -> Self:
        """A resource's quota; ``None`` leaves a field out (a malformed entry)."""
        item: dict[str, Any] = {} if name is None else {"name": name}
        if nominal is not None:
            item["nominalQuota"] = nominal
        if borrowing_limit is not None:
            item["borrowingLimit"] = borrowing_limit
        if lending_limit is not None:
            item["lendingLimit"] = lending_limit
        self.raw["resources"].append(item)
        return self


def resource_group(*flavors: Any, covered: list[Any] | None = None) -> dict[str, Any]:
    """Pure: a resource group; ``covered`` defaults to the first flavor's resources."""
    items = [raw(item) for item in flavors]
    if covered is None:
        covered = [r.get("name") for r in items[0]["resources"]] if items else []
    return {"coveredResources": list(covered), "flavors": items}


def legacy_resource(
    name: str, *flavors: str | Mapping[str, Any], quota: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Pure: an entry of a v1alpha1/v1alpha2 ClusterQueue's ``spec.resources`` (the form
    before resource groups): each flavor named with ``quota`` (default ``{"min": "1"}``), or
    given as a raw entry."""
    items = [
        dict(f) if isinstance(f, Mapping) else {"name": f, "quota": dict(quota or {"min": "1"})}
        for f in flavors
    ]
    return {"name": name, "flavors": items}


class _WithResourceGroups(KueueObject):
    def resource_group(self, *flavors: Any, covered: list[Any] | None = None) -> Self:
        """Add a resource group of these flavors (see :func:`resource_group`)."""
        return self.resource_groups(resource_group(*flavors, covered=covered))

    def resource_groups(self, *groups: Any) -> Self:
        """Add resource groups made with :func:`resource_group` (or raw ones)."""
        self.raw["spec"].setdefault("resourceGroups", []).extend(raw(g) for g in groups)
        return self

    def fair_weight(self, value: Any) -> Self:
        """``spec.fairSharing.weight``."""
        self.raw["spec"]["fairSharing"] = {"weight": value}
        return self


class cluster_queue(_WithResourceGroups):  # noqa: N801
    kind = "ClusterQueue"

    def __init__(self, name: str = "cq") -> None:
        super().__init__(name)
        self.raw["spec"] = {"namespaceSelector": {}}

    def cohort(self, name: str) -> Self:
        self.raw["spec"]["cohortName"] = name
        return self

    def queueing_strategy(self, strategy: str) -> Self:
        self.raw["spec"]["queueingStrategy"] = strategy
        return self

    def strict_fifo(self) -> Self:
        return self.queueing_strategy("StrictFIFO")

    def namespace_selector(self, selector: dict[str, Any] | None) -> Self:
        """The selector; ``None`` leaves the field out."""
        if selector is None:
            self.raw["spec"].pop("namespaceSelector", None)
        else:
            self.raw["spec"]["namespaceSelector"] = copy.deepcopy(selector)
        return self

    def stop_policy(self, policy: str) -> Self:
        self.raw["spec"]["stopPolicy"] = policy
        return self

    def usage_based_admission(self) -> Self:
        """``spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing``."""
        self.raw["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        return self

    def legacy_resources(self, *entries: Any) -> Self:
        """Add v1alpha1/v1alpha2 ``spec.resources`` entries (see :func:`legacy_resource`)."""
        self.raw["spec"].setdefault("resources", []).extend(raw(e) for e in entries)
        return self

    def fungibility(
        self,
        *,
        when_can_borrow: str | None = None,
        when_can_preempt: str | None = None,
        preference: str | None = None,
    ) -> Self:
        item: dict[str, str] = {}
        if when_can_borrow:
            item["whenCanBorrow"] = when_can_borrow
        if when_can_preempt:
            item["whenCanPreempt"] = when_can_preempt
        if preference:
            item["preference"] = preference
        self.raw["spec"]["flavorFungibility"] = item
        return self

    def preemption(self, **policy: Any) -> Self:
        """``spec.preemption``, API names: ``preemption(withinClusterQueue="LowerPriority")``."""
        self.raw["spec"]["preemption"] = copy.deepcopy(policy)
        return self

    def admission_checks(self, *checks: str | dict[str, Any]) -> Self:
        """``spec.admissionChecksStrategy``: a name, or a rule with ``onFlavors``."""
        self.raw["spec"]["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": c} if isinstance(c, str) else dict(c) for c in checks]
        }
        return self

    def flavors_reservation(self, flavor: str, **totals: str) -> Self:
        """``status.flavorsReservation`` of one flavor: ``flavors_reservation("f", cpu="2")``."""
        self.raw.setdefault("status", {}).setdefault("flavorsReservation", []).append(
            {"name": flavor, "resources": [{"name": r, "total": t} for r, t in totals.items()]}
        )
        return self


class cohort(_WithResourceGroups):  # noqa: N801
    kind = "Cohort"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {}

    def parent(self, name: str) -> Self:
        self.raw["spec"]["parentName"] = name
        return self


class local_queue(KueueObject):  # noqa: N801
    kind = "LocalQueue"

    def __init__(self, name: str = "lq", namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {}

    def cluster_queue(self, name: str) -> Self:
        self.raw["spec"]["clusterQueue"] = name
        return self

    def stop_policy(self, policy: str) -> Self:
        self.raw["spec"]["stopPolicy"] = policy
        return self

    def fair_weight(self, value: Any) -> Self:
        """``spec.fairSharing.weight`` (admission fair sharing)."""
        self.raw["spec"]["fairSharing"] = {"weight": value}
        return self

    def consumed(self, last_update: Any, **resources: str) -> Self:
        """``status.fairSharing.admissionFairSharingStatus`` as the scheduler writes it;
        ``last_update`` in seconds after ``T0`` (or a datetime or text)."""
        self.raw["status"] = {
            "fairSharing": {
                "weightedShare": 0,
                "admissionFairSharingStatus": {
                    "consumedResources": dict(resources),
                    "lastUpdate": at(last_update),
                },
            }
        }
        return self


class workload_priority_class(KueueObject):  # noqa: N801
    kind = "WorkloadPriorityClass"

    def __init__(self, name: str, value: Any = None) -> None:
        super().__init__(name)
        if value is not None:
            self.raw["value"] = value

    def description(self, text: str) -> Self:
        self.raw["description"] = text
        return self


class admission_check(KueueObject):  # noqa: N801
    kind = "AdmissionCheck"

    def __init__(self, name: str, controller: str | None = None) -> None:
        super().__init__(name)
        self.raw["spec"] = {}
        if controller is not None:
            self.controller(controller)

    def controller(self, name: str) -> Self:
        self.raw["spec"]["controllerName"] = name
        return self

    def parameters(self, kind: str, name: str, group: str = KUEUE_GROUP) -> Self:
        self.raw["spec"]["parameters"] = {"apiGroup": group, "kind": kind, "name": name}
        return self

    def multikueue(self, config: str) -> Self:
        """A MultiKueue check of the MultiKueueConfig ``config``."""
        return self.controller(f"{KUEUE_GROUP}/multikueue").parameters("MultiKueueConfig", config)

    def active(
        self,
        status: bool = True,
        *,
        message: str = "ok",
        when: float | str = 0,
    ) -> Self:
        """The ``Active`` condition its controller writes."""
        reason = "Active" if status else "Inactive"
        return self.condition("Active", status, reason=reason, message=message, at=at(when))


class multikueue_config(KueueObject):  # noqa: N801
    kind = "MultiKueueConfig"

    def __init__(self, name: str, *clusters: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {"clusters": list(clusters)}


class multikueue_cluster(KueueObject):  # noqa: N801
    kind = "MultiKueueCluster"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {}

    def kubeconfig_secret(self, location: str, *, location_type: str | None = "Secret") -> Self:
        """``spec.clusterSource.kubeConfig``: the worker's kubeconfig in a Secret."""
        source: dict[str, Any] = {"location": location}
        if location_type is not None:
            source = {"locationType": location_type, **source}
        self.raw["spec"]["clusterSource"] = {"kubeConfig": source}
        return self


class topology(KueueObject):  # noqa: N801
    kind = "Topology"

    def __init__(self, name: str, *levels: str) -> None:
        super().__init__(name)
        self.raw["spec"] = {"levels": [{"nodeLabel": label} for label in levels]}
