"""Who is asking, and may they: TokenReview and SubjectAccessReview (docs/metrics.md#access).

kuota's metrics endpoints and its dashboard serve only callers the cluster
knows and allows, the way controller-runtime's secure metrics filter does it
for Kueue: the bearer token is given to the API server in a ``TokenReview``
(``authentication.k8s.io/v1``), and the user it names is checked with a
``SubjectAccessReview`` (``authorization.k8s.io/v1``) for what the request
is about: ``get`` on the non-resource URL ``/metrics``, or a verb on a
resource for a dashboard view.

Answers are cached, so a scrape every few seconds costs the API server
nothing after the first: a token's identity for :data:`TOKEN_TTL` seconds
(only the SHA-256 of the token is kept), an allowed decision for
:data:`ALLOW_TTL`, a denied one for :data:`DENY_TTL` (controller-runtime's
delegating authorizer keeps them as long).  A revoked binding therefore
takes up to :data:`ALLOW_TTL` seconds to bite.  When the API server cannot
be asked, :class:`ReviewFailed` is raised and the request fails with 500:
nothing is let through on a guess.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.kube.rest import RestClient, RestError

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
TOKEN_TTL = 60.0
ALLOW_TTL = 300.0
DENY_TTL = 30.0
CACHE_SIZE = 4096
"""Entries per cache at most; past it the cache is emptied (a burst of strangers)."""


class ReviewFailed(Exception):
    """The API server could not be asked (or refused the review itself)."""


@dataclass(frozen=True, slots=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def key(self) -> tuple[object, ...]:
        """What identifies the user in the decision cache: pure."""
        return (self.name, self.uid, self.groups, tuple(sorted(self.extra.items())))


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request asks to do: a non-resource ``path``, or a verb on a resource."""

    verb: str
    path: str | None = None
    group: str = ""
    resource: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""

    def review_spec(self, user: User) -> dict[str, Any]:
        """The ``spec`` of the SubjectAccessReview that asks this for ``user``: pure."""
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups)}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra.items()}
        if self.path is not None:
            spec["nonResourceAttributes"] = {"path": self.path, "verb": self.verb}
        else:
            resource = {
                "verb": self.verb,
                "group": self.group,
                "resource": self.resource,
                "namespace": self.namespace,
                "name": self.name,
                "subresource": self.subresource,
            }
            spec["resourceAttributes"] = {k: v for k, v in resource.items() if v}
        return spec

    def describe(self) -> str:
        """How a refusal names what was asked: pure."""
        if self.path is not None:
            return f"{self.verb} {self.path}"
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}{where}"


def user_from_review(status: Mapping[str, Any]) -> User | None:
    """The user a TokenReview's status names, None when not authenticated: pure."""
    if status.get("authenticated") is not True:
        return None
    user = status.get("user") or {}
    extra = {
        str(key): tuple(str(v) for v in values or ())
        for key, values in (user.get("extra") or {}).items()
    }
    return User(
        name=str(user.get("username") or ""),
        uid=str(user.get("uid") or ""),
        groups=tuple(str(group) for group in user.get("groups") or ()),
        extra=extra,
    )


class _TimedCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[object, tuple[float, object]] = {}

    def get(self, key: object) -> tuple[bool, object]:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            self._entries.pop(key, None)
            return False, None
        return True, entry[1]

    def put(self, key: object, value: object, ttl: float) -> None:
        if len(self._entries) >= CACHE_SIZE:
            self._entries.clear()
        self._entries[key] = (self._clock() + ttl, value)


class AccessReviewer:
    """Authenticates bearer tokens and authorizes users through the API server (module doc)."""

    def __init__(
        self,
        rest: RestClient,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._rest = rest
        self._timeout = timeout
        self._tokens = _TimedCache(clock)
        self._decisions = _TimedCache(clock)

    async def authenticate(self, token: str) -> User | None:
        """The user the token belongs to, None when the API server does not know it."""
        key = hashlib.sha256(token.encode()).hexdigest()
        found, cached = self._tokens.get(key)
        if found:
            return cached if isinstance(cached, User) else None
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        answer = await self._create(TOKEN_REVIEWS, review)
        user = user_from_review(answer.get("status") or {})
        self._tokens.put(key, user, TOKEN_TTL if user is not None else DENY_TTL)
        return user

    async def authorize(self, user: User, attributes: Attributes) -> bool:
        """Whether ``user`` may do what ``attributes`` say."""
        key = (user.key(), attributes)
        found, cached = self._decisions.get(key)
        if found:
            return cached is True
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": attributes.review_spec(user),
        }
        answer = await self._create(ACCESS_REVIEWS, review)
        allowed = (answer.get("status") or {}).get("allowed") is True
        self._decisions.put(key, allowed, ALLOW_TTL if allowed else DENY_TTL)
        return allowed

    async def _create(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return await self._rest.create(path, body, timeout=self._timeout)
        except RestError as failure:
            raise ReviewFailed(f"could not ask the API server ({path}): {failure}") from failure


__all__ = [
    "ALLOW_TTL",
    "DENY_TTL",
    "TOKEN_TTL",
    "AccessReviewer",
    "Attributes",
    "ReviewFailed",
    "User",
    "user_from_review",
]
