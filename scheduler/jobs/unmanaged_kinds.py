"""The kinds Kueue manages and kuota does not yet: their queued objects are told so (pure).

Kueue v0.19 knows more frameworks than kuota manages (docs/concepts.md#kinds-kuota-does-not-manage).
A Configuration may list them, and every process logs a warning at start; but
the person who labels a TFJob with ``kueue.x-k8s.io/queue-name`` reads the
object, not the scheduler's log.  So the scheduler watches these kinds (only
the objects with a queue label, and only once their CRDs are served) and puts
one Warning Event on each such object: it runs now, unqueued, with no
Workload and no quota charged.

:class:`ToldObjects` remembers which objects were told, so a re-list after a
broken watch does not repeat the Event; an object deleted is forgotten.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import QUEUE_NAME_LABEL


@dataclass(frozen=True, slots=True)
class UnmanagedKind:
    """A kind of Kueue's frameworks that kuota does not manage, and where its objects live."""

    framework: str
    """Kueue's name for it in ``integrations.frameworks``."""
    group: str
    version: str
    resource: str
    kind: str


UNMANAGED_KINDS: Final = (
    UnmanagedKind("kubeflow.org/paddlejob", "kubeflow.org", "v1", "paddlejobs", "PaddleJob"),
    UnmanagedKind("kubeflow.org/tfjob", "kubeflow.org", "v1", "tfjobs", "TFJob"),
    UnmanagedKind("kubeflow.org/xgboostjob", "kubeflow.org", "v1", "xgboostjobs", "XGBoostJob"),
    UnmanagedKind(
        "sparkoperator.k8s.io/sparkapplication",
        "sparkoperator.k8s.io",
        "v1beta2",
        "sparkapplications",
        "SparkApplication",
    ),
)
"""Every framework Kueue knows that kuota does not manage, with its served version."""

NOT_MANAGED_REASON: Final = "NotManaged"
QUEUED_SELECTOR: Final = QUEUE_NAME_LABEL
"""The label selector of the objects watched: those that name a queue."""


def not_managed_message(kind: UnmanagedKind) -> str:
    """The Warning Event's message on a queued object of ``kind``: pure."""
    return (
        f"kuota does not manage {kind.framework} yet: this {kind.kind} runs unqueued, "
        "with no Workload and no quota charged, whatever its queue label says"
    )


class ToldObjects:
    """The queued objects of unmanaged kinds already told so, by UID."""

    def __init__(self) -> None:
        self._told: set[str] = set()

    def to_tell(self, event_type: str, obj: Mapping[str, Any]) -> bool:
        """Whether this informer event is the first sight of a queued object: records it."""
        uid = objects.uid(obj) or f"{objects.namespace(obj)}/{objects.name(obj)}"
        if event_type == "DELETED":
            self._told.discard(uid)
            return False
        if uid in self._told or not objects.label(obj, QUEUE_NAME_LABEL):
            return False
        self._told.add(uid)
        return True


__all__ = [
    "NOT_MANAGED_REASON",
    "QUEUED_SELECTOR",
    "UNMANAGED_KINDS",
    "ToldObjects",
    "UnmanagedKind",
    "not_managed_message",
]
