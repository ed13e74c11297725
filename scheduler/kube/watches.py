"""Which kinds the scheduler watches, and where each one's events go.

One informer per kind, all through the same REST layer: the kuota kinds the
engine needs go to :meth:`Mirror.on_kueue`, every job kind with an enabled
integration (:func:`scheduler.jobs.integrations`) to :meth:`Mirror.on_job`,
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
from scheduler.jobs import BATCH_JOB, JOBSET, POD, JobIntegration, suspendable
from scheduler.kube.informer import Event, Informer, Source
from scheduler.kube.mirror import KUEUE_KINDS, Mirror
from scheduler.kube.rest import Resource, RestClient
from scheduler.kube.source import KubeSource, OptionalKindSource

WATCHED_KUEUE_PLURALS: Final = {kind: KUEUE_PLURALS[kind] for kind in KUEUE_KINDS}
"""Kind -> resource of every kuota kind the scheduler lists and watches (its RBAC follows)."""
BUILT_IN_GROUPS: Final = frozenset({"", "apps", "batch"})
"""API groups every API server serves; any other kind may lack its CRD."""


def job_resource(integration: JobIntegration) -> Resource:
    """Where the objects of an integration's kind live: pure."""
    version = integration.api_version.rpartition("/")[2]
    return Resource(integration.group, version, integration.resource)


JOBS: Final = job_resource(BATCH_JOB)
JOBSETS: Final = job_resource(JOBSET)
NAMESPACES: Final = Resource("", "v1", "namespaces")
PRIORITY_CLASSES: Final = Resource("scheduling.k8s.io", "v1", "priorityclasses")
PODS: Final = job_resource(POD)
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

    A job kind is watched only when ``frameworks`` (the Configuration's
    ``integrations.frameworks``) enables its integration, batch/v1 Jobs
    included: the webhook lets the Jobs of a disabled framework through
    unsuspended, and a scheduler that still managed them would stop them
    after they started.  Every kind goes to the same handler (one Job
    controller for every integration).  A kind outside the built-in API
    groups may lack its CRD (JobSet): its informer then stays empty and says
    so once (:class:`OptionalKindSource`).
    Plain Pods (the ``pod`` integration, which has its own decisions) are
    watched when ``pod`` is enabled, only those labelled
    ``kueue.x-k8s.io/managed=true`` (the ones kuota's webhook gated), never
    every Pod of the cluster, and never one in ``never_managed``
    (``kube-system``, kuota's namespace), whatever its labels say.
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
    for integration in suspendable():
        if integration.framework not in frameworks:
            continue
        source: Source = KubeSource(rest, job_resource(integration))
        if integration.group not in BUILT_IN_GROUPS:
            source = OptionalKindSource(
                KubeSource(rest, job_resource(integration)), what=f"{integration.kind}s"
            )
        informers.append(Informer(integration.kind, source, then_wake(Mirror.on_job)))
    informers += [
        Informer("Namespace", KubeSource(rest, NAMESPACES), then_wake(Mirror.on_namespace)),
        Informer(
            "PriorityClass",
            KubeSource(rest, PRIORITY_CLASSES),
            then_wake(Mirror.on_priority_class),
        ),
    ]
    if POD.framework in frameworks:
        excluded = frozenset(never_managed)

        def on_pod(current: Mirror, event: Event) -> None:
            if objects.namespace(event.object) not in excluded:
                current.on_job(event)

        pods = KubeSource(rest, PODS, label_selector=MANAGED_PODS)
        informers.append(Informer("Pod", pods, then_wake(on_pod)))
    return informers
