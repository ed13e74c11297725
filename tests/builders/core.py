"""Builders of Kubernetes' own kinds the scheduler reads: Namespace, PriorityClass, Pod
(alone or in a pod group), Secret, LimitRange, RuntimeClass.

    namespace("team-a").labels(team="a")
    priority_class("high", 1000).global_default()
    pod("p", "ml").queue("user-queue").group("sample-group", total=3).requests(cpu="1")
    limit_range("defaults", "ml").item("Container", defaultRequest={"cpu": "1"})
    runtime_class("kata").overhead(cpu="250m")
"""

from __future__ import annotations

from typing import Any, Self

from tests.builders.base import ObjectBuilder
from tests.builders.pods import PodTemplate, container

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"


class namespace(ObjectBuilder):  # noqa: N801 - reads like a manifest
    """A Namespace with the ``kubernetes.io/metadata.name`` label the API server adds."""

    api_version = "v1"
    kind = "Namespace"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.labels({"kubernetes.io/metadata.name": name})


class priority_class(ObjectBuilder):  # noqa: N801
    """A ``scheduling.k8s.io/v1`` PriorityClass (the pods' own priority classes)."""

    api_version = "scheduling.k8s.io/v1"
    kind = "PriorityClass"

    def __init__(self, name: str, value: int) -> None:
        super().__init__(name)
        self.raw["value"] = value

    def global_default(self, value: bool = True) -> Self:
        self.raw["globalDefault"] = value
        return self


class secret(ObjectBuilder):  # noqa: N801
    api_version = "v1"
    kind = "Secret"

    def __init__(self, name: str, namespace: str | None = None) -> None:
        super().__init__(name, namespace)

    def data(self, **values: str) -> Self:
        self.raw.setdefault("data", {}).update(values)
        return self


class limit_range(ObjectBuilder):  # noqa: N801
    """A ``v1`` LimitRange with no item yet."""

    api_version = "v1"
    kind = "LimitRange"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {"limits": []}

    def item(self, type_: str, **fields: Any) -> Self:
        """One ``spec.limits`` item of type ``type_`` (``default=...``, ``defaultRequest=...``)."""
        self.raw["spec"]["limits"].append({"type": type_, **fields})
        return self


class runtime_class(ObjectBuilder):  # noqa: N801
    """A ``node.k8s.io/v1`` RuntimeClass of handler ``handler``, without overhead."""

    api_version = "node.k8s.io/v1"
    kind = "RuntimeClass"

    def __init__(self, name: str, handler: str = "runc") -> None:
        super().__init__(name)
        self.raw["handler"] = handler

    def overhead(self, **pod_fixed: str) -> Self:
        """``overhead.podFixed``."""
        self.raw["overhead"] = {"podFixed": dict(pod_fixed)}
        return self


class pod(ObjectBuilder, PodTemplate):  # noqa: N801
    """A Pod with one container ``c`` (image ``busybox``, no resources until requested)."""

    api_version = "v1"
    kind = "Pod"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {"containers": [container(resources=False)]}

    def _template(self) -> dict[str, Any]:
        return self.raw

    def queue(self, name: str) -> Self:
        return self.labels({QUEUE_LABEL: name})

    def group(self, name: str, total: int) -> Self:
        """A member of the pod group ``name`` of ``total`` pods."""
        return self.labels({POD_GROUP_LABEL: name}).annotations({POD_GROUP_TOTAL: str(total)})

    def phase(self, phase: str, message: str | None = None) -> Self:
        status = self.raw.setdefault("status", {})
        status["phase"] = phase
        if message is not None:
            status["message"] = message
        return self


def pod_group(
    name: str, total: int, namespace: str = "default", *, prefix: str | None = None
) -> list[pod]:
    """The ``total`` members of the pod group ``name``: ``<prefix>-0`` … (prefix: ``name``)."""
    return [
        pod(f"{prefix or name}-{index}", namespace).uid(f"uid-{index}").group(name, total)
        for index in range(total)
    ]
