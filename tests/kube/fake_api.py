"""An in-memory API server behind the REST layer's protocol, for unit tests.

It keeps objects by path, gives every write a new resourceVersion, applies
JSON patches with ``jsonpatch`` (a failed ``test`` is a Conflict, as on a
real server), answers 404 for unknown objects and 409 for a create of an
existing name, records every call in order, and queues a watch event for
every write (a delete checks its preconditions); :meth:`FakeApi.events`
hands them to the test, which decides when the scheduler's mirror "sees"
them.  Failures are injected per verb and path with :meth:`FakeApi.fail`.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from scheduler.kube.rest import Conflict, NotFound, Query, RestError

CREATED = "2026-11-22T11:00:00Z"


@dataclass
class Call:
    verb: str
    path: str
    body: Any = None
    timeout: float | None = None


@dataclass
class FakeApi:
    store: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    pending_events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    failures: list[tuple[str, str, RestError]] = field(default_factory=list)
    latency: float = 0.0
    version: int = 100
    in_flight: dict[str, int] = field(default_factory=dict)
    most_in_flight: dict[str, int] = field(default_factory=dict)
    concurrent: int = 0
    most_concurrent: int = 0
    managed: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    """Path -> field manager -> the status fields it applied (server-side apply)."""
    applies: list[tuple[str, str, bool]] = field(default_factory=list)
    """(path, field manager, force) of every apply."""
    propagations: list[tuple[str, str | None]] = field(default_factory=list)
    """(path, propagation policy) of every delete."""

    # -- test controls -------------------------------------------------------------------

    def fail(self, verb: str, path_part: str, error: RestError) -> None:
        """The next ``verb`` call whose path contains ``path_part`` raises ``error``."""
        self.failures.append((verb, path_part, error))

    def put(self, path: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Store ``obj`` at ``path`` (as someone else's write would), with a new version."""
        stored = copy.deepcopy(dict(obj))
        self.version += 1
        stored.setdefault("metadata", {})["resourceVersion"] = str(self.version)
        event = "MODIFIED" if path in self.store else "ADDED"
        self.store[path] = stored
        self.pending_events.append((event, copy.deepcopy(stored)))
        return copy.deepcopy(stored)

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        """The watch events since the last call, oldest first."""
        events, self.pending_events = self.pending_events, []
        return events

    def verbs(self) -> list[str]:
        """``"PATCH /apis/.../status"``-style lines of every call, in order."""
        return [f"{call.verb} {call.path}" for call in self.calls]

    # -- the protocol ----------------------------------------------------------------------

    async def _enter(
        self, verb: str, path: str, body: Any = None, timeout: float | None = None
    ) -> None:
        self.calls.append(Call(verb, path, copy.deepcopy(body), timeout))
        self.in_flight[path] = self.in_flight.get(path, 0) + 1
        self.most_in_flight[path] = max(self.most_in_flight.get(path, 0), self.in_flight[path])
        self.concurrent += 1
        self.most_concurrent = max(self.most_concurrent, self.concurrent)
        try:
            await asyncio.sleep(self.latency)
            for index, (fail_verb, part, error) in enumerate(self.failures):
                if fail_verb == verb and part in path:
                    del self.failures[index]
                    raise error
        finally:
            self.in_flight[path] -= 1
            self.concurrent -= 1

    def _object(self, path: str) -> tuple[str, dict[str, Any]]:
        base = path.removesuffix("/status")
        if base not in self.store:
            raise NotFound(f"{path} not found", status=404)
        return base, self.store[base]

    async def get(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]:
        await self._enter("GET", path)
        return copy.deepcopy(self._object(path)[1])

    async def list(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]:
        await self._enter("LIST", path)
        items = [copy.deepcopy(o) for p, o in self.store.items() if p.startswith(path + "/")]
        return {"items": items, "metadata": {"resourceVersion": str(self.version)}}

    async def create(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        await self._enter("POST", path, body, timeout)
        name = body.get("metadata", {}).get("name") or f"generated-{self.version}"
        target = f"{path}/{name}"
        if target in self.store:
            raise Conflict(f"{target} already exists", status=409)
        created = copy.deepcopy(dict(body))
        created["metadata"] = {**created.get("metadata", {}), "name": name}
        created["metadata"].setdefault("uid", f"uid-{name}")
        created["metadata"].setdefault("creationTimestamp", CREATED)
        return self.put(target, created)

    async def replace(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        await self._enter("PUT", path, body, timeout)
        _, current = self._object(path)
        wanted = body.get("metadata", {}).get("resourceVersion")
        if wanted != current["metadata"]["resourceVersion"]:
            raise Conflict("the object has been modified", status=409)
        return self.put(path, body)

    async def json_patch(
        self,
        path: str,
        operations: Sequence[Mapping[str, Any]],
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        await self._enter("PATCH", path, list(operations), timeout)
        base, current = self._object(path)
        try:
            patched = jsonpatch.apply_patch(current, [dict(op) for op in operations])
        except jsonpatch.JsonPatchTestFailed as failed:
            raise Conflict(f"PATCH {path}: HTTP 422: test failed: {failed}", status=422) from None
        return self.put(base, patched)

    async def merge_patch(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        await self._enter("MERGE", path, body, timeout)
        base, current = self._object(path)
        wanted = (body.get("metadata") or {}).get("resourceVersion")
        if wanted is not None and wanted != current["metadata"]["resourceVersion"]:
            raise Conflict("the object has been modified", status=409)
        return self.put(base, merged(current, body))

    async def delete(
        self,
        path: str,
        *,
        preconditions: Mapping[str, str] | None = None,
        timeout: float | None = None,
        propagation: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        await self._enter("DELETE", path, dict(preconditions or {}), timeout)
        self.propagations.append((path, propagation))
        base, current = self._object(path)
        metadata = current.get("metadata", {})
        for key, wanted in (preconditions or {}).items():
            if metadata.get(key) != wanted:
                raise Conflict(f"DELETE {path}: precondition failed: {key}", status=409)
        del self.store[base]
        self.version += 1
        gone = copy.deepcopy(current)
        self.pending_events.append(("DELETED", gone))
        return {"kind": "Status", "status": "Success"}

    async def stream(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """A watch that ends at once (the tests deliver events themselves)."""
        await self._enter("WATCH", path)
        for _ in ():
            yield {}

    async def apply(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Server-side apply of a status, as far as the scheduler uses it.

        The resourceVersion in ``body`` is a precondition (409).  Status fields
        are owned per manager: a top-level field or a condition (keyed by
        type).  A field the manager applied before and leaves out now is
        removed unless another manager owns it; without ``force``, applying a
        field another manager owns is a 409 conflict.
        """
        await self._enter("PATCH", path, body, timeout)  # an HTTP PATCH; ``applies`` tells it apart
        self.applies.append((path, field_manager, force))
        base, current = self._object(path)
        wanted = body.get("metadata", {}).get("resourceVersion")
        if wanted is not None and wanted != current["metadata"]["resourceVersion"]:
            raise Conflict(f"PATCH {path}: HTTP 409: the object has been modified", status=409)
        applied_status = dict(body.get("status") or {})
        conditions = {c["type"]: dict(c) for c in applied_status.pop("conditions", None) or []}
        fields = {f"status.{name}" for name in applied_status} | {
            f"condition.{kind}" for kind in conditions
        }
        owners = self.managed.setdefault(base, {})
        others = {f for manager, owned in owners.items() if manager != field_manager for f in owned}
        if not force and fields & others:
            raise Conflict(f"PATCH {path}: HTTP 409: apply conflict on {fields & others}", 409)
        for manager, owned in owners.items():
            if manager != field_manager:
                owned -= fields
        dropped = owners.get(field_manager, set()) - fields - others
        owners[field_manager] = fields
        result = copy.deepcopy(current)
        status = result.setdefault("status", {})
        kept = []
        for item in status.get("conditions", []):
            if item["type"] in conditions:
                kept.append(conditions.pop(item["type"]))
            elif f"condition.{item['type']}" not in dropped:
                kept.append(item)
        status["conditions"] = [*kept, *conditions.values()]
        for name in [f.removeprefix("status.") for f in dropped if f.startswith("status.")]:
            status.pop(name, None)
        status.update(copy.deepcopy(applied_status))
        return self.put(base, result)


def merged(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: mappings merge, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result
