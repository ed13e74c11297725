"""Raw JSON over the Kubernetes REST API: any path in, plain dicts out.

kuota reads and writes the API's JSON as dicts (``scheduler.api`` parses
them, ``scheduler.api.objects`` reads them), so the generated model classes
of kubernetes_asyncio would only cost a conversion each way.  :class:`Rest`
calls ``ApiClient.call_api(..., _preload_content=False)`` on a path and
decodes the body itself; the client still does what it is good at
(authentication, TLS, token refresh, connection pooling).

One small exception vocabulary replaces ``ApiException`` and aiohttp's
errors, so callers decide by meaning rather than by status code:

========================  =====================================================
:class:`NotFound`         404: the object (or the kind) does not exist
:class:`Conflict`         409, or 422 from a JSON patch whose ``test`` failed:
                          the object changed since it was read; recompute
:class:`Expired`          410: the resourceVersion fell out of the history
:class:`Unreachable`      no answer: connection refused or reset, timeout
:class:`ApiError`         any other error status (403, 422 invalid, 5xx)
========================  =====================================================

All derive from :class:`RestError`.  :class:`RestClient` is the protocol the
adapters depend on, so unit tests pass an in-memory fake instead.

Writes offered: create (POST), replace (PUT), JSON patch (RFC 6902), merge
patch (RFC 7386), delete (with preconditions) and server-side apply
(``application/apply-patch+yaml`` with a field manager).  Each takes a
``timeout``: the client stops waiting then, and the API server is told the
same deadline (its ``timeout`` parameter), which is how the fenced writer
(:mod:`scheduler.kube.fence`) keeps a write from landing after the Lease may
have passed on.  Kueue writes Workload status by server-side apply as
``kueue-admission``; so does kuota's writer, through :meth:`Rest.apply`.

Requests are rate-limited on the client, and a 429 with ``Retry-After`` is
asked again (:mod:`scheduler.kube.rate_limit`).  A request that waits for
its token has that much less of its ``timeout``; a write whose deadline
passed while it waited is not sent (:class:`Unreachable`).

Objects come back **without** ``metadata.managedFields`` (answers, list
items, watch events).  Server-side apply's record of which manager set which
field is more than half of an admitted Workload, and no part of kuota reads
it; kept by the informers and copied by the mirror for every event, it would
be the largest share of the scheduler's memory per Workload.  This is
what controller-runtime's ``TransformStripManagedFields`` does for its
caches.  Writes are unaffected: an update or patch that carries no
``managedFields`` leaves the server's record as it is, and since every object
kuota holds lacks it, no patch computed between two of them touches it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
from kubernetes_asyncio.client import ApiClient

from scheduler.kube.rate_limit import MAX_RETRY_AFTER, RETRIES_AFTER_429, TokenBucket, retry_after

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

Query = Sequence[tuple[str, Any]]


def _drop_managed_fields(obj: object) -> None:
    """Remove ``metadata.managedFields`` from ``obj`` in place (anything else: left alone)."""
    if isinstance(obj, dict):
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)


def _without_managed_fields(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` (one object or a list, just parsed) without managedFields.

    Mutates ``answer``, which nobody else holds yet, to spare a copy.
    """
    _drop_managed_fields(answer)
    items = answer.get("items")
    if isinstance(items, list):
        for item in items:
            _drop_managed_fields(item)
    return answer


class RestError(Exception):
    """Something went wrong talking to the API server; ``status`` is the HTTP status, if any."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotFound(RestError):
    """HTTP 404: the object, or its kind, does not exist."""


class Conflict(RestError):
    """The object changed since it was read (409, or a failed JSON-patch ``test``)."""


class Expired(RestError):
    """HTTP 410 Gone: the requested resourceVersion is no longer in the server's history."""


class Unreachable(RestError):
    """No answer: the connection failed, broke or timed out."""


class ApiError(RestError):
    """Any other error status (forbidden, invalid, server error)."""


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind lives in the API; ``group`` "" is the core group."""

    group: str
    version: str
    plural: str

    @property
    def path(self) -> str:
        """The collection across all namespaces (or of a cluster-scoped kind): pure."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{prefix}/{self.plural}"

    def object_path(
        self, name: str, *, namespace: str | None = None, subresource: str | None = None
    ) -> str:
        """The path of one object (``namespace`` None: cluster-scoped) or its subresource: pure."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        scope = f"/namespaces/{namespace}" if namespace else ""
        tail = f"/{subresource}" if subresource else ""
        return f"{prefix}{scope}/{self.plural}/{name}{tail}"

    def collection_path(self, namespace: str | None = None) -> str:
        """The collection in ``namespace`` (None: every namespace or cluster-scoped): pure."""
        if not namespace:
            return self.path
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{prefix}/namespaces/{namespace}/{self.plural}"


class RestClient(Protocol):
    """What the adapters need from the API server; :class:`Rest` is the real one."""

    async def get(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def list(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def create(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def replace(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def json_patch(
        self,
        path: str,
        operations: Sequence[Mapping[str, Any]],
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]: ...

    async def merge_patch(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def delete(
        self,
        path: str,
        *,
        preconditions: Mapping[str, str] | None = None,
        timeout: float | None = None,
        propagation: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]: ...

    async def apply(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]: ...

    def stream(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]: ...


def status_message(body: str) -> str:
    """The readable part of an API ``Status`` body: its message and its causes' messages: pure.

    The API server puts the interesting part of some errors in the causes:
    a failed JSON-patch ``test`` is "the server rejected our request due to
    an error in our request" with "testing value ... failed" as its cause.
    A body that is not a Status is returned as it is.
    """
    try:
        decoded = json.loads(body)
    except ValueError:
        return body
    if not isinstance(decoded, dict) or not isinstance(decoded.get("message"), str):
        return body
    details = decoded.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    extra = [
        cause["message"]
        for cause in causes or []
        if isinstance(cause, dict)
        and isinstance(cause.get("message"), str)
        and cause["message"] not in decoded["message"]
    ]
    return "; ".join([decoded["message"], *extra])


PATCH_NOT_APPLICABLE = "the server rejected our request due to an error in our request"
"""kube-apiserver's whole answer (422, reason Invalid, no details) when a JSON patch
cannot be applied to the stored object: a ``test`` failed, or a path it
changes is gone.  Validation errors say ``<Kind> "<name>" is invalid: ...``."""


def patch_did_not_apply(message: str) -> bool:
    """Whether a 422 to a JSON patch means "the object is not what the patch was made from": pure.

    For kuota's guarded patches (computed from the object as read, first
    testing its resourceVersion) that is a conflict: recompute from a fresh
    read.  Servers that quote the patch library's error say "test failed".
    """
    return PATCH_NOT_APPLICABLE in message or "test failed" in message.lower()


def deadline(timeout: float | None) -> list[tuple[str, Any]]:
    """The API server's own ``timeout`` request parameter for a write of ``timeout`` s: pure.

    kube-apiserver ends a request at that deadline (the one client-go's
    ``Request.Timeout`` sends), so a write the client gave up on is not
    stored later either.  None: no parameter (the server's default).
    """
    if timeout is None:
        return []
    return [("timeout", f"{max(1, int(timeout * 1000))}ms")]


def error_for(status: int, body: str, *, what: str) -> RestError:
    """The exception of the vocabulary for an HTTP error ``status``: pure.

    ``body`` is the API server's answer (a ``Status`` object, quoted by its
    messages); ``what`` names the request (``PATCH /apis/...``).
    """
    text = f"{what}: HTTP {status}: {status_message(body)[:500].strip()}"
    if status == 404:
        return NotFound(text, status=status)
    if status == 409:
        return Conflict(text, status=status)
    if status == 410:
        return Expired(text, status=status)
    return ApiError(text, status=status)


class _TryAgain(Exception):
    """Internal: a 429 carrying ``Retry-After``; ``error`` is what the caller sees if it lasts."""

    def __init__(self, error: RestError, seconds: float) -> None:
        super().__init__(str(error))
        self.error = error
        self.seconds = seconds


def _after_wait(query: Query, timeout: float | None, waited: float) -> tuple[Query, float | None]:
    """The query and timeout of a request that waited ``waited`` s for its token: pure."""
    if timeout is None or waited <= 0:
        return query, timeout
    left = timeout - waited
    if any(name == "timeout" for name, _ in query):
        query = [(name, value) for name, value in query if name != "timeout"] + deadline(
            max(left, 0.001)
        )
    return query, left


class Rest:
    """:class:`RestClient` over a kubernetes_asyncio ``ApiClient`` (raw JSON both ways)."""

    def __init__(
        self,
        api: ApiClient,
        *,
        timeout: float | None = None,
        limiter: TokenBucket | None = None,
    ) -> None:
        self.api = api
        self.timeout = timeout
        """Default request timeout in seconds (None: the client's)."""
        self.limiter = limiter
        """The client-side rate limit (None: none)."""

    async def _send(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> aiohttp.ClientResponse:
        """The raw response of a successful call; errors raised as the vocabulary.

        A 429 that says when to come back (``Retry-After``: API priority and
        fairness, or a watch cache still initializing) is asked again then, at
        most :data:`~scheduler.kube.rate_limit.RETRIES_AFTER_429` times and
        within the call's timeout, as client-go does; any other error is
        raised at once.
        """
        for attempt in range(RETRIES_AFTER_429 + 1):
            started = time.monotonic()
            try:
                return await self._send_once(
                    method, path, query=query, body=body, content_type=content_type, timeout=timeout
                )
            except _TryAgain as later:
                wait = min(later.seconds, MAX_RETRY_AFTER)
                if attempt == RETRIES_AFTER_429:
                    raise later.error from None
                query, left = _after_wait(query, timeout, time.monotonic() - started + wait)
                if left is not None and left <= 0:
                    raise later.error from None
                await asyncio.sleep(wait)
                timeout = left
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _send_once(
        self,
        method: str,
        path: str,
        *,
        query: Query,
        body: Any,
        content_type: str,
        timeout: float | None,
    ) -> aiohttp.ClientResponse:
        what = f"{method} {path}"
        if self.limiter is not None:
            query, timeout = _after_wait(query, timeout, await self.limiter.acquire())
            if timeout is not None and timeout <= 0:
                raise Unreachable(f"{what}: its deadline passed while waiting for the rate limit")
        try:
            response: aiohttp.ClientResponse = await self.api.call_api(
                path,
                method,
                query_params=list(query),
                header_params={"Accept": "application/json", "Content-Type": content_type},
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=timeout if timeout is not None else self.timeout,
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as failure:
            raise Unreachable(f"{what}: {type(failure).__name__}: {failure}") from failure
        if response.status >= 400:
            try:
                text = (await response.read()).decode(errors="replace")
            except (TimeoutError, aiohttp.ClientError, OSError):
                text = ""
            finally:
                response.release()
            error = error_for(response.status, text, what=what)
            seconds = retry_after(response.status, response.headers.get("Retry-After"))
            if seconds is not None:
                raise _TryAgain(error, seconds)
            raise error
        return response

    async def _json(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> dict[str, Any]:
        response = await self._send(
            method, path, query=query, body=body, content_type=content_type, timeout=timeout
        )
        try:
            payload = json.loads(await response.read())
        except (TimeoutError, aiohttp.ClientError, OSError) as failure:
            raise Unreachable(f"{method} {path}: reading the answer: {failure!r}") from failure
        except ValueError as failure:
            raise ApiError(f"{method} {path}: the answer is not JSON: {failure}") from failure
        finally:
            response.release()
        if not isinstance(payload, dict):
            raise ApiError(f"{method} {path}: the answer is not a JSON object")
        return _without_managed_fields(payload)

    async def get(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]:
        """GET one object (or anything that answers a JSON object)."""
        return await self._json("GET", path, query=query, timeout=timeout)

    async def list(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]:
        """GET a collection: the List object (``items`` and ``metadata.continue``)."""
        return await self._json("GET", path, query=query, timeout=timeout)

    async def create(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """POST ``body`` to a collection; the object as stored."""
        return await self._json(
            "POST", path, query=deadline(timeout), body=dict(body), timeout=timeout
        )

    async def replace(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """PUT ``body`` (with its resourceVersion: optimistic concurrency); the object as stored."""
        return await self._json(
            "PUT", path, query=deadline(timeout), body=dict(body), timeout=timeout
        )

    async def json_patch(
        self,
        path: str,
        operations: Sequence[Mapping[str, Any]],
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """An RFC 6902 patch; a failed ``test`` operation is a :class:`Conflict`."""
        try:
            return await self._json(
                "PATCH",
                path,
                query=deadline(timeout),
                body=[dict(op) for op in operations],
                content_type=JSON_PATCH,
                timeout=timeout,
            )
        except ApiError as failure:
            if failure.status == 422 and patch_did_not_apply(str(failure)):
                raise Conflict(str(failure), status=422) from failure
            raise

    async def merge_patch(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """An RFC 7386 merge patch (lists are replaced whole)."""
        return await self._json(
            "PATCH",
            path,
            query=deadline(timeout),
            body=dict(body),
            content_type=MERGE_PATCH,
            timeout=timeout,
        )

    async def delete(
        self,
        path: str,
        *,
        preconditions: Mapping[str, str] | None = None,
        timeout: float | None = None,
        propagation: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        """DELETE one object; ``preconditions`` (``uid``, ``resourceVersion``) make it conditional.

        A precondition that no longer holds is a 409 :class:`Conflict`.
        ``propagation`` (``Background``, ``Foreground``, ``Orphan``): what
        happens to dependents; a batch Job deleted without it orphans its pods.
        """
        body: dict[str, Any] | None = None
        if preconditions or propagation or grace_period_seconds is not None:
            body = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if body is not None and preconditions:
            body["preconditions"] = dict(preconditions)
        if body is not None and propagation:
            body["propagationPolicy"] = propagation
        if body is not None and grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        return await self._json("DELETE", path, query=deadline(timeout), body=body, timeout=timeout)

    async def apply(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Server-side apply of ``body`` (the whole intent, with apiVersion and kind)."""
        query: list[tuple[str, Any]] = [("fieldManager", field_manager)]
        if force:
            query.append(("force", "true"))
        return await self._json(
            "PATCH",
            path,
            query=[*query, *deadline(timeout)],
            body=dict(body),
            content_type=APPLY_PATCH,
            timeout=timeout,
        )

    async def stream(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """A watch: one JSON object per line until the server ends the stream.

        A broken connection is :class:`Unreachable`; a line that is not a JSON
        object is a :class:`RestError` (the stream is no longer trustworthy).
        """
        response = await self._send("GET", path, query=query, timeout=timeout)
        try:
            while True:
                try:
                    line = await response.content.readline()
                except (TimeoutError, aiohttp.ClientError, OSError) as failure:
                    raise Unreachable(f"watch {path} broke: {failure!r}") from failure
                if not line:
                    return
                try:
                    event = json.loads(line)
                except ValueError as failure:
                    raise RestError(f"malformed watch event: {line[:200]!r}") from failure
                if isinstance(event, dict):
                    _drop_managed_fields(event.get("object"))
                    yield event
        finally:
            response.release()
