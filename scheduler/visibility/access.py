"""May this caller see these pending workloads?  The API server's RBAC answers.

See docs/visibility.md#who-may-see-what.  Every request for
``pendingworkloads`` is authorized as the API server would authorize it: a
``SubjectAccessReview`` for verb ``get`` on the resource ``clusterqueues``
(cluster scope) or ``localqueues`` (in the request's namespace), subresource
``pendingworkloads``, group ``visibility.kueue.x-k8s.io``, with the queue's
name, for the user, groups, uid and extra the front proxy vouched for.  So
a user sees a ClusterQueue's pending workloads only with a ClusterRole that
grants that ``get`` cluster-wide (Kueue's ``kueue-batch-admin-role``), and a
LocalQueue's only in namespaces where a Role or ClusterRole binding grants it
(``kueue-batch-user-role``; the ``view`` role aggregates it).

An *allowed* answer is remembered for ``ALLOWED_TTL_SECONDS`` per identical
question, so a client paging through a queue costs one review; a denial is
never remembered, so a binding just created takes effect on the next
request.  Nothing is assumed when the review cannot be made: the request
fails (HTTP 500) instead of being let through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from scheduler.kube.rest import RestClient
from scheduler.visibility.identity import User
from scheduler.visibility.wire import GROUP, SUBRESOURCE, QueueResource

REVIEWS_PATH: Final = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
ALLOWED_TTL_SECONDS: Final = 2.0
"""How long an allowed answer stands for the same question (a revoked binding may still let
through requests of that long; the API server's own webhook authorizer keeps 10 s)."""
CACHE_ENTRIES: Final = 4096
REVIEW_TIMEOUT_SECONDS: Final = 5.0


@dataclass(frozen=True, slots=True)
class Question:
    """One ``get`` of a queue's ``pendingworkloads``."""

    resource: QueueResource
    version: str
    name: str
    namespace: str | None


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str = ""


def review_body(user: User, question: Question) -> dict[str, Any]:
    """The ``SubjectAccessReview`` that asks RBAC: pure."""
    attributes: dict[str, Any] = {
        "verb": "get",
        "group": GROUP,
        "version": question.version,
        "resource": question.resource.plural,
        "subresource": SUBRESOURCE,
        "name": question.name,
    }
    if question.namespace is not None:
        attributes["namespace"] = question.namespace
    spec: dict[str, Any] = {"user": user.name, "resourceAttributes": attributes}
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def decision_of(answer: dict[str, Any]) -> Decision:
    """What a review's ``status`` says (allowed only when it says so): pure."""
    status = answer.get("status") or {}
    reason = str(status.get("reason") or status.get("evaluationError") or "")
    return Decision(allowed=status.get("allowed") is True, reason=reason)


class AccessReviewer:
    """Asks the API server, through ``rest``, and remembers allowed answers briefly."""

    def __init__(
        self,
        rest: RestClient,
        *,
        clock: Callable[[], float],
        allowed_ttl: float = ALLOWED_TTL_SECONDS,
    ) -> None:
        self._rest = rest
        self._clock = clock
        self._ttl = allowed_ttl
        self._allowed: dict[tuple[User, Question], float] = {}
        self.reviews = 0
        """Reviews sent so far (tests, diagnostics)."""

    async def decide(self, user: User, question: Question) -> Decision:
        """RBAC's answer for ``user`` asking ``question``; raises ``RestError`` if unanswered."""
        now = self._clock()
        key = (user, question)
        expires = self._allowed.get(key)
        if expires is not None and now < expires:
            return Decision(allowed=True)
        self.reviews += 1
        answer = await self._rest.create(
            REVIEWS_PATH, review_body(user, question), timeout=REVIEW_TIMEOUT_SECONDS
        )
        decision = decision_of(answer)
        if decision.allowed:
            if len(self._allowed) >= CACHE_ENTRIES:
                self._allowed = {k: t for k, t in self._allowed.items() if t > now}
                if len(self._allowed) >= CACHE_ENTRIES:
                    self._allowed.clear()
            self._allowed[key] = now + self._ttl
        else:
            self._allowed.pop(key, None)
        return decision


__all__ = [
    "ALLOWED_TTL_SECONDS",
    "AccessReviewer",
    "Decision",
    "Question",
    "decision_of",
    "review_body",
]
