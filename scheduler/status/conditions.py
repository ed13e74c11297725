"""The Kubernetes condition rules every status kuota writes keeps (pure).

``lastTransitionTime`` changes only when a condition's ``status`` changes;
reason and message may change freely.  Messages are capped (32 KiB, as the
API server's validation allows) and a cut message ends with ``" ..."``.
Times are RFC 3339 in UTC with second precision, as the API server stores
them, so a value read back compares equal to the value written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from scheduler.api.objects import find_condition

MAX_MESSAGE_BYTES = 32768

__all__ = ["MAX_MESSAGE_BYTES", "find_condition", "set_condition", "timestamp", "truncate"]


def timestamp(now: datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server stores it: pure."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate(message: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """Condition messages are capped; a cut message ends with ``" ..."`` (pure)."""
    encoded = message.encode()
    if len(encoded) <= limit:
        return message
    return encoded[: limit - 4].decode(errors="ignore") + " ..."


def set_condition(
    conditions: Sequence[Mapping[str, Any]],
    *,
    kind: str,
    status: bool,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None = None,
) -> list[dict[str, Any]]:
    """A new list with ``kind`` set; the transition time moves only when status flips (pure)."""
    wanted = "True" if status else "False"
    result = [dict(c) for c in conditions]
    existing = next((c for c in result if c.get("type") == kind), None)
    entry: dict[str, Any] = {
        "type": kind,
        "status": wanted,
        "reason": reason,
        "message": truncate(message),
    }
    if generation is not None:
        entry["observedGeneration"] = generation
    if (
        existing is not None
        and existing.get("status") == wanted
        and existing.get("lastTransitionTime")
    ):
        entry["lastTransitionTime"] = existing["lastTransitionTime"]
    else:
        entry["lastTransitionTime"] = timestamp(now)
    if existing is None:
        result.append(entry)
    else:
        result[result.index(existing)] = entry
    return result
