"""Why a pod set got no flavor, as data, and the one renderer of its words.

See docs/scheduling.md#pending-reasons.

Flavor assignment records a reason for every flavor it examined and could
not use: a *shortage* (the flavor lacks unused quota; waiting or preempting
may cure it) or a *blocker* (nothing that frees quota helps: a request above
the maximum capacity, an untolerated taint, a node-affinity mismatch, a
missing ResourceFlavor, a resource the ClusterQueue has no quota for).  Each
reason knows its note, the exact phrase of Kueue's pending message, and
``pod_set_message`` joins the notes of one pod set in the documented order
(sorted notes).  The message a user reads therefore exists in one place,
and readers such as ``kuota explain`` use the fields instead of parsing text.

Amounts are exact ``Quantity`` values in the engine's canonical form, so a
note prints them exactly as before (``format_amount`` is ``str(to_quantity)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from scheduler.api.models import Taint
from scheduler.api.quantity import Quantity
from scheduler.core.node_matching import describe_taint


class PreemptionPossibility(Enum):
    """What preemption can do about one shortage (the three preemption modes, and "not at all")."""

    NOT_POSSIBLE = "NotPossible"
    """Policy and quota rule preemption out: the FR waits for quota (NoFit, ``WaitingForQuota``)."""
    NO_CANDIDATES = "NoCandidates"
    """Preemption may help, but no workload qualifies as a victim now ("Preempt, no candidates")."""
    PREEMPT = "Preempt"
    """Victims exist, some of them in the workload's own ClusterQueue."""
    RECLAIM = "Reclaim"
    """Victims exist, all in other ClusterQueues of the cohort (reclamation)."""


@dataclass(frozen=True, slots=True)
class Shortage:
    """``amount`` more of ``resource`` must be unused in ``flavor`` for ``pod_set`` to fit."""

    pod_set: str
    flavor: str
    resource: str
    amount: Quantity
    borrowing: bool
    """The request would be charged above the ClusterQueue's own nominal quota (cohort quota)."""
    preemption: PreemptionPossibility

    def note(self) -> str:
        """The shortage note: pure."""
        return (
            f"insufficient unused quota for {self.resource} in flavor {self.flavor}, "
            f"{self.amount} more needed"
        )


@dataclass(frozen=True, slots=True)
class ExceedsMaximum:
    """The pod set (plus earlier pod sets) asks for more than the ClusterQueue can ever have."""

    pod_set: str
    flavor: str
    resource: str
    earlier: Quantity
    """What earlier pod sets of the same workload already take of this FR."""
    request: Quantity
    maximum: Quantity

    def note(self) -> str:
        """The ``ExceedsMaxQuota`` note: pure."""
        return (
            f"insufficient quota for {self.resource} in flavor {self.flavor}, previously "
            f"considered podsets requests ({self.earlier}) + current podset request "
            f"({self.request}) > maximum capacity ({self.maximum})"
        )


@dataclass(frozen=True, slots=True)
class UntoleratedTaint:
    """The flavor's nodes carry a blocking taint the pod set does not tolerate."""

    pod_set: str
    flavor: str
    taint: Taint

    @property
    def taint_text(self) -> str:
        """The taint as Kueue prints it, ``{key value effect <nil>}``: pure."""
        return describe_taint(self.taint)

    def note(self) -> str:
        """The taint note: pure."""
        return f"untolerated taint {self.taint_text} in flavor {self.flavor}"


@dataclass(frozen=True, slots=True)
class AffinityMismatch:
    """The pod set's node selection excludes the flavor's nodes."""

    pod_set: str
    flavor: str

    def note(self) -> str:
        """The affinity note: pure."""
        return f"flavor {self.flavor} doesn't match node affinity"


@dataclass(frozen=True, slots=True)
class FlavorNotFound:
    """The ClusterQueue names a ResourceFlavor that does not exist."""

    pod_set: str
    flavor: str

    def note(self) -> str:
        """The missing-flavor note: pure."""
        return f"flavor {self.flavor} not found"


@dataclass(frozen=True, slots=True)
class ResourceUnavailable:
    """The pod set requests a resource no resource group of the ClusterQueue covers."""

    pod_set: str
    resource: str

    def note(self) -> str:
        """The uncovered-resource note: pure."""
        return f"resource {self.resource} unavailable in ClusterQueue"


@dataclass(frozen=True, slots=True)
class TopologyMismatch:
    """The flavor cannot serve the pod set's topology request (or serves only TAS requests).

    See docs/concepts.md#topology-aware-scheduling.
    """

    pod_set: str
    flavor: str
    text: str
    """Kueue's phrase, e.g. ``Flavor "f" does not support TopologyAwareScheduling``."""

    def note(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class TopologyUnplaced:
    """The quota fits, but no domain of the flavor's topology holds the pod set's pods.

    See docs/concepts.md#topology-aware-scheduling.
    """

    pod_set: str
    flavor: str
    text: str
    """The placement's own words: ``topology "t" allows to fit only 6 out of 8 pod(s)``."""
    with_preemption: bool
    """Whether evicting every TAS workload would make room (False: nothing but more
    nodes helps)."""
    fits: int | None = None
    """How many pods (or slices) the best domain of ``level`` holds, when known."""
    needed: int | None = None
    unit: str = "pod"
    level: str | None = None
    in_one: bool = True
    """``fits`` counts one domain of ``level`` (False: the whole topology)."""

    def note(self) -> str:
        return self.text


Blocker = (
    ExceedsMaximum
    | UntoleratedTaint
    | AffinityMismatch
    | FlavorNotFound
    | ResourceUnavailable
    | TopologyMismatch
    | TopologyUnplaced
)
"""A reason no release of quota can cure."""

PodSetReason = Shortage | Blocker
"""Why one flavor (or the whole ClusterQueue) could not take a pod set."""


Details = tuple[tuple[Shortage, ...], tuple[Blocker, ...]]
"""(shortages, blockers) behind a pending message, each in the order the message names them."""

NO_DETAILS: Details = ((), ())

_RENDERED: dict[tuple[str, tuple[PodSetReason, ...]], tuple[str, Details]] = {}
_RENDERED_LIMIT = 10_000


def render(pod_set: str, reasons: Sequence[PodSetReason]) -> tuple[str, Details]:
    """One pod set's message and its details, each in the message's order: pure.

    ``couldn't assign flavors to pod set <name>: <notes>``, the notes sorted
    alphabetically.  Results are shared by value (the reasons are immutable): the
    many workloads that wait in one ClusterQueue for the same reason get one
    message and one details pair, instead of allocating (and keeping, and
    making the garbage collector walk) equal copies.  Bounded like the
    pod-set interning of ``workload``.
    """
    key = (pod_set, tuple(reasons))
    found = _RENDERED.get(key)
    if found is None:
        pairs = sorted([(reason.note(), reason) for reason in reasons], key=_first)
        notes = ", ".join([note for note, _ in pairs])
        found = (
            f"couldn't assign flavors to pod set {pod_set}: {notes}",
            split([reason for _, reason in pairs]),
        )
        if len(_RENDERED) >= _RENDERED_LIMIT:
            _RENDERED.clear()
        _RENDERED[key] = found
    return found


def _first(pair: tuple[str, PodSetReason]) -> str:
    return pair[0]


def pod_set_message(pod_set: str, reasons: Iterable[PodSetReason]) -> str:
    """``couldn't assign flavors to pod set <name>: <sorted notes>``: pure."""
    return render(pod_set, list(reasons))[0]


def split(reasons: Iterable[PodSetReason]) -> Details:
    """(shortages, blockers) of ``reasons``, each in the given order: pure."""
    shortages: list[Shortage] = []
    blockers: list[Blocker] = []
    for reason in reasons:
        if isinstance(reason, Shortage):
            shortages.append(reason)
        else:
            blockers.append(reason)
    return (tuple(shortages), tuple(blockers)) if shortages or blockers else NO_DETAILS


__all__ = [
    "AffinityMismatch",
    "Blocker",
    "Details",
    "ExceedsMaximum",
    "FlavorNotFound",
    "NO_DETAILS",
    "PodSetReason",
    "PreemptionPossibility",
    "ResourceUnavailable",
    "Shortage",
    "TopologyMismatch",
    "TopologyUnplaced",
    "UntoleratedTaint",
    "pod_set_message",
    "render",
    "split",
]
