"""The conversion annotations: where data that a version cannot express is kept.

Kubernetes converters keep what the target version has no field for in an
annotation, so that converting back restores it.  kuota does the same
(api.md 14.5, a kuota decision) with one prefix, ``conversion.kuota.io/``:

* ``conversion.kuota.io/v1beta2-fields`` is written when converting **down**
  from v1beta2 (to v1alpha1, v1alpha2 or v1beta1).  It holds the v1beta2-only
  data and is read and removed when converting back up.
* ``conversion.kuota.io/<version>-fields`` (``v1alpha1-fields`` as the spec
  names it, and by the same pattern ``v1alpha2-fields`` and ``v1beta1-fields``)
  is written when converting **up** to v1beta2 and holds what only that older
  version could say.  It is read and removed when converting back down to that
  same version; other versions leave it alone.

The value is a compact JSON object.  A reader applies only the entries that
still fit the object and always removes the annotation; an annotation that is
not a JSON object is ignored with a warning.  Nothing is written when there
is nothing to keep, so a plain object gets no annotation at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.convert._common import Obj, Warnings, deep

PREFIX: Final = "conversion.kuota.io/"
HUB_FIELDS: Final = PREFIX + "v1beta2-fields"


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
