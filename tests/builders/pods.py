"""Pod templates and containers, shared by every kind that runs pods.

``container()`` is one container (name ``c``, image ``busybox``); :class:`PodTemplate`
is the mixin of every builder with a pod template (Pod, Job, JobSet, Deployment,
StatefulSet, a Workload's pod set): its setters act on the first container of the
template, or on the last replicated job of a JobSet.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Self


def container(
    name: str = "c",
    *,
    image: str | None = "busybox",
    requests: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    resources: bool = True,
) -> dict[str, Any]:
    """Pure: one container; ``resources`` holds the requests and limits given (none: ``{}``);
    ``resources=False`` leaves the key out, ``image=None`` the image."""
    item: dict[str, Any] = {"name": name}
    if image is not None:
        item["image"] = image
    if resources:
        item["resources"] = {}
        if requests is not None:
            item["resources"]["requests"] = dict(requests)
        if limits is not None:
            item["resources"]["limits"] = dict(limits)
    return item


def toleration(
    key: str, value: str = "", operator: str = "Equal", effect: str = ""
) -> dict[str, Any]:
    """Pure: a toleration; ``value`` only with ``operator="Equal"``."""
    item = {"key": key, "operator": operator, "effect": effect}
    if operator == "Equal":
        item["value"] = value
    return item


def required_affinity(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    """Pure: a required node affinity; each term is a list of (key, operator, values)."""
    return {
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


class PodTemplate:
    """Setters on a pod template; a subclass says where its template is."""

    def _template(self) -> dict[str, Any]:
        raise NotImplementedError

    def _pod_spec(self) -> dict[str, Any]:
        return self._template().setdefault("spec", {})  # type: ignore[no-any-return]

    def _first_container(self) -> dict[str, Any]:
        containers = self._pod_spec().setdefault("containers", [])
        if not containers:
            containers.append(container())
        return containers[0]  # type: ignore[no-any-return]

    def requests(self, requests: Mapping[str, Any] | None = None, **by_name: Any) -> Self:
        """Requests of the first container (a mapping for names like ``nvidia.com/gpu``)."""
        resources = self._first_container().setdefault("resources", {})
        resources.setdefault("requests", {}).update({**(requests or {}), **by_name})
        return self

    def limits(self, limits: Mapping[str, Any] | None = None, **by_name: Any) -> Self:
        resources = self._first_container().setdefault("resources", {})
        resources.setdefault("limits", {}).update({**(limits or {}), **by_name})
        return self

    def image(self, image: str) -> Self:
        self._first_container()["image"] = image
        return self

    def containers(self, *items: dict[str, Any]) -> Self:
        """Replace the containers (``containers()`` leaves none)."""
        self._pod_spec()["containers"] = copy.deepcopy(list(items))
        return self

    def init_containers(self, *items: dict[str, Any]) -> Self:
        self._pod_spec()["initContainers"] = copy.deepcopy(list(items))
        return self

    def pod_spec(self, **fields: Any) -> Self:
        """Pod spec fields, verbatim."""
        self._pod_spec().update(copy.deepcopy(fields))
        return self

    def restart_policy(self, policy: str) -> Self:
        self._pod_spec()["restartPolicy"] = policy
        return self

    def node_selector(self, labels: Mapping[str, str] | None = None, **by_name: str) -> Self:
        self._pod_spec().setdefault("nodeSelector", {}).update({**(labels or {}), **by_name})
        return self

    def toleration(
        self, key: str, value: str = "", operator: str = "Equal", effect: str = ""
    ) -> Self:
        self._pod_spec().setdefault("tolerations", []).append(
            toleration(key, value, operator, effect)
        )
        return self

    def required_affinity(self, *terms: list[tuple[str, str, list[str]]]) -> Self:
        self._pod_spec()["affinity"] = required_affinity(*terms)
        return self

    def priority_class_name(self, name: str) -> Self:
        self._pod_spec()["priorityClassName"] = name
        return self

    def template_labels(self, labels: Mapping[str, str] | None = None, **by_name: str) -> Self:
        metadata = self._template().setdefault("metadata", {})
        metadata.setdefault("labels", {}).update({**(labels or {}), **by_name})
        return self

    def template_annotations(
        self, annotations: Mapping[str, str] | None = None, **by_name: str
    ) -> Self:
        metadata = self._template().setdefault("metadata", {})
        metadata.setdefault("annotations", {}).update({**(annotations or {}), **by_name})
        return self
