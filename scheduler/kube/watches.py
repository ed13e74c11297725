"""Which kinds the scheduler watches, and where each one's events go.

One informer per kind, all through the same REST layer: the kuota kinds the
engine needs go to :meth:`Mirror.on_kueue`, Jobs to :meth:`Mirror.on_job`,
Namespaces and PriorityClasses to their handlers; ``mirror`` is asked for on
every event, so the service can swap in a rebuilt mirror (a replica that
stepped down) without restarting the informers.  Every event also calls
``on_change`` (the scheduling loop's wake-up), so a change is acted on at
once instead of at the next idle tick.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Final

from scheduler.api import objects
from scheduler.api.refs import (
    HUB_VERSION,
    KUEUE_GROUP,
    KUEUE_PLURALS,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
)
from scheduler.jobs.jobset import JOBSET_FRAMEWORK
from scheduler.jobs.pod import POD_FRAMEWORK
from scheduler.kube.informer import Event, Informer
from scheduler.kube.mirror import KUEUE_KINDS, Mirror
from scheduler.kube.rest import Resource, RestClient
from scheduler.kube.source import KubeSource, OptionalKindSource

WATCHED_KUEUE_PLURALS: Final = {kind: KUEUE_PLURALS[kind] for kind in KUEUE_KINDS}
"""Kind -> resource of every kuota kind the scheduler lists and watches (its RBAC follows)."""
JOBS: Final = Resource("batch", "v1", "jobs")
JOBSETS: Final = Resource("jobset.x-k8s.io", "v1alpha2", "jobsets")
NAMESPACES: Final = Resource("", "v1", "namespaces")
PRIORITY_CLASSES: Final = Resource("scheduling.k8s.io", "v1", "priorityclasses")
PODS: Final = Resource("", "v1", "pods")
MANAGED_PODS: Final = f"{MANAGED_LABEL}={MANAGED_LABEL_VALUE}"
"""The only Pods the scheduler lists and watches: those kuota's webhook took in."""


def scheduler_informers(
    rest: RestClient,
    mirror: Callable[[], Mirror],
    *,
    on_change: Callable[[], None],
    frameworks: Collection[str] = ("batch/job",),
    never_managed: Collection[str] = ("kube-system", "kueue-system"),
) -> list[Informer]:
    """The scheduler's informers, each feeding ``mirror()`` and then calling ``on_change``.

    JobSets are watched when ``frameworks`` (the Configuration's
    ``integrations.frameworks``) enables them; they go to the same handler as
    Jobs (one Job controller for every integration).  Plain Pods are watched
    when ``pod`` is enabled, only those labelled ``kueue.x-k8s.io/managed=true``
    (the ones kuota's webhook gated), never every Pod of the cluster, and never
    one in ``never_managed`` (``kube-system``, kuota's namespace), whatever its
    labels say: kuota does not touch those.  Without the JobSet CRD
    the informer stays empty and says so once (:class:`OptionalKindSource`).
    """

    def then_wake(handler: Callable[[Mirror, Event], None]) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            handler(mirror(), event)
            on_change()

        return handle

    informers = [
        Informer(
            kind,
            KubeSource(rest, Resource(KUEUE_GROUP, HUB_VERSION, plural)),
            then_wake(Mirror.on_kueue),
        )
        for kind, plural in WATCHED_KUEUE_PLURALS.items()
    ]
    informers += [
        Informer("Job", KubeSource(rest, JOBS), then_wake(Mirror.on_job)),
        Informer("Namespace", KubeSource(rest, NAMESPACES), then_wake(Mirror.on_namespace)),
        Informer(
            "PriorityClass",
            KubeSource(rest, PRIORITY_CLASSES),
            then_wake(Mirror.on_priority_class),
        ),
    ]
    if JOBSET_FRAMEWORK in frameworks:
        source = OptionalKindSource(KubeSource(rest, JOBSETS), what="JobSets")
        informers.append(Informer("JobSet", source, then_wake(Mirror.on_job)))
    if POD_FRAMEWORK in frameworks:
        excluded = frozenset(never_managed)

        def on_pod(current: Mirror, event: Event) -> None:
            if objects.namespace(event.object) not in excluded:
                current.on_job(event)

        pods = KubeSource(rest, PODS, label_selector=MANAGED_PODS)
        informers.append(Informer("Pod", pods, then_wake(on_pod)))
    return informers
