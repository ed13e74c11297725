"""The base of every test builder: an object's envelope (apiVersion, kind, metadata) and
the generic setters every kind shares.

A builder holds the raw dict in ``raw`` and returns itself from every setter, so a test
reads like the manifest it stands for::

    cluster_queue("cq").cohort("c").resource_group(flavor_quotas("f").resource("cpu", "9"))

``build()`` gives a fresh deep copy of the raw dict, shaped as the API server returns the
object (apiVersion, kind, metadata, spec, status); ``listed()`` gives it as an item of a
List (no apiVersion, no kind); ``model()`` gives the engine's typed model, parsed by the
product's own parser (``tests.builders.models``).  Extend a builder rather than copying
a dict; for a deliberately malformed object, ``spec(**fields)``, ``status(**fields)``,
``set(**fields)`` and ``unset("spec.x")`` write raw fields verbatim.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Self

T0 = datetime(2024, 1, 1, tzinfo=UTC)
"""The builders' epoch: ``created(5)`` is five seconds after it."""


def stamp(moment: datetime) -> str:
    """Pure: ``moment`` as the API server writes timestamps (RFC 3339, seconds, ``Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def at(when: float | datetime | str) -> str:
    """Pure: a timestamp ``when`` seconds after :data:`T0` (or ``when`` itself, written)."""
    if isinstance(when, str):
        return when
    if isinstance(when, datetime):
        return stamp(when)
    return stamp(T0 + timedelta(seconds=when))


_at = at


def raw(obj: Any) -> Any:
    """Pure: a builder's dict (a deep copy), or ``obj`` itself when it is not a builder."""
    return obj.build() if isinstance(obj, Built) else obj


def condition(
    kind: str,
    status: str | bool = "True",
    *,
    reason: str | None = "",
    message: str | None = "",
    at: float | datetime | str | None = 0,
) -> dict[str, Any]:
    """Pure: one status condition; ``reason`` defaults to ``kind``; ``None`` leaves a key out."""
    if isinstance(status, bool):
        status = "True" if status else "False"
    item: dict[str, Any] = {"type": kind, "status": status}
    if reason is not None:
        item["reason"] = reason or kind
    if message is not None:
        item["message"] = message
    if at is not None:
        item["lastTransitionTime"] = _at(at)
    return item


class Built:
    """Anything with a ``build()`` that returns a fresh raw dict."""

    raw: dict[str, Any]

    def build(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)

    def copy(self) -> Self:
        """Another builder of the same object, to change without changing this one (a
        module-level object that several cases start from)."""
        other = copy.copy(self)
        other.raw = copy.deepcopy(self.raw)
        return other

    def set(self, **fields: Any) -> Self:
        """Top-level fields, verbatim (``value=`` of a priority class, ``data=`` of a Secret)."""
        self.raw.update(copy.deepcopy(fields))
        return self

    def unset(self, *paths: str) -> Self:
        """Remove fields by dotted path (``"spec.completions"``); a missing one is no error."""
        for path in paths:
            *parents, last = path.split(".")
            node: Any = self.raw
            for part in parents:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict):
                node.pop(last, None)
        return self


class ObjectBuilder(Built):
    """An API object: ``apiVersion``, ``kind``, ``metadata`` and, per kind, ``spec``."""

    api_version = ""
    kind = ""

    def __init__(self, name: str | None, namespace: str | None = None) -> None:
        metadata: dict[str, Any] = {} if name is None else {"name": name}
        if namespace is not None:
            metadata["namespace"] = namespace
        self.raw = {"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata}

    # -- the envelope ------------------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self.raw["metadata"].get("name", ""))

    def api(self, api_version: str) -> Self:
        """Another apiVersion (``kueue.x-k8s.io/v1alpha1`` for a legacy object)."""
        self.raw["apiVersion"] = api_version
        return self

    def listed(self) -> dict[str, Any]:
        """The object as an item of a List answer: no apiVersion, no kind."""
        built = self.build()
        built.pop("apiVersion", None)
        built.pop("kind", None)
        return built

    def model(self) -> Any:
        """The engine's typed model of this object (the product's parser)."""
        from tests.builders.models import model

        return model(self)

    # -- metadata ----------------------------------------------------------------------

    @property
    def metadata(self) -> dict[str, Any]:
        return self.raw["metadata"]  # type: ignore[no-any-return]

    def namespace(self, namespace: str | None) -> Self:
        if namespace is None:
            self.metadata.pop("namespace", None)
        else:
            self.metadata["namespace"] = namespace
        return self

    def uid(self, uid: str | None) -> Self:
        if uid is None:
            self.metadata.pop("uid", None)
        else:
            self.metadata["uid"] = uid
        return self

    def created(self, when: float | datetime | str | None) -> Self:
        """``creationTimestamp``: seconds after :data:`T0`, a datetime, or the text itself."""
        if when is None:
            self.metadata.pop("creationTimestamp", None)
        else:
            self.metadata["creationTimestamp"] = at(when)
        return self

    def resource_version(self, version: str | int) -> Self:
        self.metadata["resourceVersion"] = str(version)
        return self

    def generation(self, generation: int) -> Self:
        self.metadata["generation"] = generation
        return self

    def labels(self, labels: Mapping[str, str] | None = None, **by_name: str) -> Self:
        """Add labels (a mapping for keys that are no Python names)."""
        self.metadata.setdefault("labels", {}).update({**(labels or {}), **by_name})
        return self

    def annotations(self, annotations: Mapping[str, str] | None = None, **by_name: str) -> Self:
        self.metadata.setdefault("annotations", {}).update({**(annotations or {}), **by_name})
        return self

    def owner(
        self,
        kind: str,
        name: str,
        uid: str,
        *,
        api_version: str | None = "batch/v1",
        controller: bool | None = None,
    ) -> Self:
        """Add an owner reference."""
        reference: dict[str, Any] = {"kind": kind, "name": name, "uid": uid}
        if api_version is not None:
            reference = {"apiVersion": api_version, **reference}
        if controller is not None:
            reference["controller"] = controller
        self.metadata.setdefault("ownerReferences", []).append(reference)
        return self

    def finalizers(self, *names: str) -> Self:
        self.metadata["finalizers"] = list(names)
        return self

    def deleting(self, when: float | datetime | str) -> Self:
        """``metadata.deletionTimestamp``: the object is being deleted."""
        self.metadata["deletionTimestamp"] = at(when)
        return self

    # -- spec and status, verbatim ----------------------------------------------------

    def spec(self, **fields: Any) -> Self:
        """``spec`` fields, verbatim (camelCase API names)."""
        self.raw.setdefault("spec", {}).update(copy.deepcopy(fields))
        return self

    def status(self, **fields: Any) -> Self:
        """``status`` fields, verbatim."""
        self.raw.setdefault("status", {}).update(copy.deepcopy(fields))
        return self

    def condition(
        self,
        kind: str,
        status: str | bool = "True",
        *,
        reason: str | None = "",
        message: str | None = "",
        at: float | datetime | str | None = 0,
    ) -> Self:
        """Add a condition to ``status.conditions`` (see :func:`condition`)."""
        item = condition(kind, status, reason=reason, message=message, at=at)
        self.raw.setdefault("status", {}).setdefault("conditions", []).append(item)
        return self
