"""The conversion annotations: where data that a version cannot express is kept.

Kubernetes converters keep what the target version has no field for in an
annotation, so that converting back restores it.  kuota does the same
(docs/api-differences.md#conversion-annotations) with one prefix, ``conversion.kuota.io/``:

* ``conversion.kuota.io/v1beta2-fields`` is written when converting **down**
  from v1beta2 (to v1alpha1, v1alpha2 or v1beta1).  It holds the v1beta2-only
  data and is read and removed when converting back up.
* ``conversion.kuota.io/<version>-fields`` (``v1alpha1-fields``, and by
  the same pattern ``v1alpha2-fields`` and ``v1beta1-fields``)
  is written when converting **up** to v1beta2 and holds what only that older
  version could say.  It is read and removed when converting back down to that
  same version; other versions leave it alone.

The value is a compact JSON object.  A reader applies only the entries that
still fit the object and always removes the annotation; an annotation that is
not a JSON object is ignored with a warning.  Nothing is written when there
is nothing to keep, so a plain object gets no annotation at all.

**A stash never overrides what a request sets.**  ``kubectl apply`` of an
older-version manifest patches the object *as the down-conversion wrote it*
and the API server converts the result back up.  The patch only touches what
the manifest and the last applied configuration mention; everything else the
down-conversion wrote, the stash included, comes back unchanged, even when it
no longer agrees with what the request set.  So a stash entry that would take
the place of a field the other version *can* express (a stashed preemption
merged over ``spec.preemption``, a ``nodeSelector`` written only to carry
``spec.nodeLabels`` past ``metadata.labels``) is restored only when that field
still says what it said when the stash was made.  The converter that writes
such an entry records, under the ``shadowed`` key of the same annotation, a
fingerprint of each field the entry shadows, as it wrote it
(:func:`record`); the converter that reads it compares them with the
incoming object (:class:`Shadowed`) and drops the entry when one changed:
the request wins.  Entries the other version cannot express at all
(tolerations, a stop policy, a lending limit) shadow nothing and are always
restored, as Kubernetes does for fields an older version does not know.
A plain round trip changes nothing, so it stays lossless.

The same rule holds in the other direction: a ``<version>-fields`` entry
that reshapes a v1beta2 field on the way down (the v1beta1 list form of
admission checks, a v1alpha2 ``nodeSelector`` the user wrote) records the
v1beta2 field and is applied only while a v1beta2 write has left it as it was.
A fingerprint is the start of a SHA-256 of the value's canonical JSON: short,
and stable across the API server's re-encoding (key order is not kept).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler.api.convert._common import Obj, Warnings, deep

PREFIX: Final = "conversion.kuota.io/"
HUB_FIELDS: Final = PREFIX + "v1beta2-fields"
SHADOWED: Final = "shadowed"
FINGERPRINT_LENGTH: Final = 16


def fields_key(version: str) -> str:
    """The annotation key holding data only ``version`` can express: pure."""
    return f"{PREFIX}{version}-fields"


def take(obj: Obj, key: str, warnings: Warnings) -> dict[str, Any]:
    """Remove annotation ``key`` from ``obj`` (a fresh copy) and decode it.

    Mutates only ``obj``, which the caller created; returns ``{}`` when the
    annotation is absent or unreadable (then with a warning).
    """
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return {}
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or key not in annotations:
        return {}
    raw = annotations.pop(key)
    if not annotations:
        del metadata["annotations"]
    try:
        decoded = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        decoded = None
    if not isinstance(decoded, dict):
        warnings.append(f"annotation {key} is not a JSON object; it was ignored and removed")
        return {}
    return decoded


def put(obj: Obj, key: str, data: Mapping[str, Any]) -> None:
    """Store ``data`` under annotation ``key`` of ``obj`` (a fresh copy); nothing when empty."""
    if not data:
        return
    metadata = obj.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        return
    annotations = metadata.setdefault("annotations", {})
    annotations[key] = json.dumps(data, separators=(",", ":"))


def apply_safely(
    target: Obj, apply: Any, stored: Mapping[str, Any], key: str, warnings: Warnings
) -> Obj:
    """Run ``apply(copy_of_target, stored)``; on a malformed annotation keep ``target``.

    Returns the object to use.  ``apply`` may mutate the copy it is given.
    """
    if not stored:
        return target
    candidate = deep(target)
    try:
        apply(candidate, stored)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError):
        warnings.append(
            f"annotation {key} does not have the expected shape; it was ignored and removed"
        )
        return target
    return candidate


# --- what a stash entry shadows ------------------------------------------------------------------


def fingerprint(value: Any) -> str:
    """A short digest of ``value``'s canonical JSON (keys sorted): pure."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def record(stash: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Remember in ``stash`` how each field (path → value) was written; mutates ``stash``.

    Call it with the values exactly as the converted object carries them, and
    only for fields a stash entry shadows.
    """
    shadowed = stash.setdefault(SHADOWED, {})
    for path, value in fields.items():
        shadowed[path] = fingerprint(value)


@dataclass(frozen=True)
class Shadowed:
    """The fingerprints a stash was recorded with, to compare with the incoming object.

    ``unreadable`` is set when the record was not a map of strings: then no
    field counts as unchanged and every field counts as changed, so the
    object is taken as it is.
    """

    fingerprints: Mapping[str, str] = field(default_factory=dict)
    unreadable: bool = False

    def unchanged(self, path: str, value: Any) -> bool:
        """True when ``path`` was recorded with exactly this value: pure."""
        if self.unreadable or path not in self.fingerprints:
            return False
        return self.fingerprints[path] == fingerprint(value)

    def changed(self, path: str, value: Any) -> bool:
        """True when ``path`` was recorded with another value (or the record is unreadable): pure.

        A field that was never recorded has not changed: stashes written before
        fingerprints existed keep their old meaning.
        """
        if self.unreadable:
            return True
        return path in self.fingerprints and self.fingerprints[path] != fingerprint(value)


def shadowed(stash: dict[str, Any], key: str, warnings: Warnings) -> Shadowed:
    """Remove the ``shadowed`` record from ``stash`` (mutates it) and return it.

    An unreadable record is reported once in ``warnings``.
    """
    raw = stash.pop(SHADOWED, None)
    if raw is None:
        return Shadowed()
    if not isinstance(raw, dict) or not all(
        isinstance(path, str) and isinstance(digest, str) for path, digest in raw.items()
    ):
        warnings.append(
            f"annotation {key} has an unreadable {SHADOWED!r} record; the object was taken as it is"
        )
        return Shadowed(unreadable=True)
    return Shadowed(dict(raw))


def take_guarded(obj: Obj, key: str, warnings: Warnings) -> tuple[dict[str, Any], Shadowed]:
    """:func:`take`, with the ``shadowed`` record split off the stash.

    Mutates only ``obj``, which the caller created.
    """
    stash = take(obj, key, warnings)
    return stash, shadowed(stash, key, warnings)
