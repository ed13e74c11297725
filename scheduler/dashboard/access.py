"""Who may see what on the dashboard: the cluster's own answers (docs/dashboard.md#access).

Every ``/api/`` request carries the viewer's bearer token (the browser keeps
the one pasted at login in its session storage and sends it as
``Authorization: Bearer``).  The API server says who it belongs to
(``TokenReview``), and each view asks it whether that user may read what
the view shows (``SubjectAccessReview``, cached as for ``/metrics``:
:mod:`scheduler.kube.access_review`):

- ClusterQueues, cohorts, usage over time: ``list clusterqueues``;
  flavors: ``list resourceflavors``;
- LocalQueues and Workloads: ``list`` them cluster-wide, else only in the
  namespaces where the user may (one review per namespace shown);
- one Workload: ``get workloads`` in its namespace, its Events ``list
  events`` there;
- the stream of live updates carries no data (a counter only): a valid
  token is enough.

The dashboard's own ServiceAccount reads the cluster; a viewer never sees
more through it than their own rights allow.  Static files (the page and
its script) carry no data and need no token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from scheduler.api.refs import KUEUE_GROUP
from scheduler.kube.access_review import Attributes, ReviewFailed
from scheduler.kube.secure_serving import USER, Reviewer, bearer_token

API = "/api/"


def kueue(verb: str, resource: str, namespace: str = "", name: str = "") -> Attributes:
    return Attributes(
        verb=verb, group=KUEUE_GROUP, resource=resource, namespace=namespace, name=name
    )


def authenticate(reviewer: Reviewer) -> Middleware:
    """401 for an ``/api/`` request without a token the API server knows; else its user."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(API):
            return await handler(request)
        token = bearer_token(request.headers.get("Authorization"))
        try:
            user = await reviewer.authenticate(token) if token else None
        except ReviewFailed as failure:
            return web.json_response({"error": str(failure)}, status=500)
        if user is None:
            reason = "no bearer token" if token is None else "the token is not valid"
            return web.json_response(
                {"error": f"Unauthorized: {reason}"},
                status=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        request[USER] = user
        return await handler(request)

    return check


async def require(request: web.Request, reviewer: Reviewer, attributes: Attributes) -> None:
    """Raise 403 unless the request's user may do ``attributes``."""
    user = request[USER]
    try:
        allowed = await reviewer.authorize(user, attributes)
    except ReviewFailed as failure:
        raise web.HTTPInternalServerError(text=str(failure)) from failure
    if not allowed:
        raise web.HTTPForbidden(
            text=f'{{"error": "Forbidden: user {user.name} may not {attributes.describe()}"}}',
            content_type="application/json",
        )


async def namespaces(
    request: web.Request, reviewer: Reviewer, resource: str, candidates: Collection[str]
) -> set[str] | None:
    """The namespaces of ``candidates`` where the user may list ``resource``; None: all."""
    user = request[USER]
    try:
        if await reviewer.authorize(user, kueue("list", resource)):
            return None
        answers = await asyncio.gather(
            *(reviewer.authorize(user, kueue("list", resource, ns)) for ns in sorted(candidates))
        )
    except ReviewFailed as failure:
        raise web.HTTPInternalServerError(text=str(failure)) from failure
    return {ns for ns, allowed in zip(sorted(candidates), answers, strict=True) if allowed}


__all__ = ["authenticate", "kueue", "namespaces", "require"]
