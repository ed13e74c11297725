"""The dashboard's copy of the cluster: informers of what ``kuota explain`` reads, and nodes.

The same kinds as the CLI's one-shot read (:mod:`scheduler.cli.cluster_reader`):
every ``kueue.x-k8s.io`` kind, the queued jobs of the kinds created
suspended, the pods kuota started for a job, Namespaces and PriorityClasses
(plus Nodes, for the flavors page), kept current by list + watch
(:mod:`scheduler.kube.informer`) so that :meth:`Mirror.snapshot` is a
:class:`~scheduler.cli.live.ClusterObjects` at any moment, and every change
bumps :attr:`Mirror.version` and calls ``on_change`` (the live updates).
A kind that is not served (a CRD not installed) is simply empty.  The
dashboard's ServiceAccount lists and watches these kinds and nothing else;
it writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP, KUEUE_PLURALS, QUEUE_NAME_LABEL
from scheduler.cli.cluster_reader import CORE_RESOURCES, KUEUE_RESOURCES
from scheduler.cli.live import ClusterObjects
from scheduler.jobs import SuspendOnCreate, capability, job_integrations
from scheduler.jobs.start_placement import STARTED_PODS_SELECTOR
from scheduler.kube.informer import Event, Informer, Source
from scheduler.kube.rest import Resource, RestClient
from scheduler.kube.source import KubeSource, OptionalKindSource
from scheduler.kube.watches import kind_resource

PODS = Resource("", "v1", "pods")
NODES = Resource("", "v1", "nodes")


class Mirror:
    """Informers over every kind the dashboard shows (module docstring)."""

    def __init__(self, rest: RestClient, *, on_change: Callable[[], None] = lambda: None) -> None:
        self.version = 0
        self._on_change = on_change
        self._by_attribute: dict[str, list[Informer]] = {}
        sources: list[tuple[str, str, Source]] = [
            (
                attribute,
                kind,
                self._optional(rest, Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS[kind]), kind),
            )
            for attribute, kind in KUEUE_RESOURCES.items()
        ]
        sources += [
            (attribute, attribute, KubeSource(rest, resource))
            for attribute, resource in CORE_RESOURCES.items()
        ]
        sources.append(
            ("pods", "JobPod", KubeSource(rest, PODS, label_selector=STARTED_PODS_SELECTOR))
        )
        sources.append(("nodes", "Node", KubeSource(rest, NODES)))
        for integration in job_integrations():
            if capability(integration, SuspendOnCreate) is None:
                continue
            kube = KubeSource(rest, kind_resource(integration), label_selector=QUEUE_NAME_LABEL)
            sources.append(
                ("jobs", integration.kind, self._optional_source(kube, integration.kind))
            )
        for attribute, name, source in sources:
            informer = Informer(name, source, self._changed)
            self._by_attribute.setdefault(attribute, []).append(informer)

    @staticmethod
    def _optional(rest: RestClient, resource: Resource, kind: str) -> Source:
        return OptionalKindSource(KubeSource(rest, resource), what=f"{kind}s")

    @staticmethod
    def _optional_source(source: KubeSource, kind: str) -> Source:
        return OptionalKindSource(source, what=f"{kind}s")

    def _changed(self, _: Event) -> None:
        self.version += 1
        self._on_change()

    @property
    def informers(self) -> list[Informer]:
        return [informer for group in self._by_attribute.values() for informer in group]

    def ready(self) -> bool:
        """Every informer has listed once."""
        return all(informer.synced.is_set() for informer in self.informers)

    async def run(self) -> None:
        """Run every informer until cancelled."""
        await asyncio.gather(*(informer.run() for informer in self.informers))

    def snapshot(self) -> ClusterObjects:
        """Everything mirrored now, as the CLI's views read it."""
        found = ClusterObjects()
        for attribute, informers in self._by_attribute.items():
            items: list[dict[str, Any]] = [
                dict(obj) for informer in informers for obj in informer.store.values()
            ]
            if attribute == "nodes":
                continue
            setattr(found, attribute, items)
        return found

    def nodes(self) -> list[dict[str, Any]]:
        return [
            dict(obj) for informer in self._by_attribute["nodes"] for obj in informer.store.values()
        ]


__all__ = ["Mirror"]
