"""Work lists of keys to decide again, and the test for watch events older than what is known.

Shared by the cluster state and its topology part (:mod:`scheduler.kube.state`,
:mod:`scheduler.kube.topology_state`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from scheduler.api import objects
from scheduler.kube.informer import Event

log = logging.getLogger("kuota.state")


class WorkList:
    """Keys of objects to look at again; whoever does the work takes them all at once."""

    def __init__(self) -> None:
        self._keys: set[str] = set()

    def add(self, key: str) -> None:
        self._keys.add(key)

    def update(self, keys: Iterator[str] | set[str] | list[str]) -> None:
        self._keys.update(keys)

    def take(self) -> set[str]:
        """Every key added since the last take (and none left)."""
        keys, self._keys = self._keys, set()
        return keys

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)


def stale(event: Event, known: Mapping[str, Any] | None) -> bool:
    """Whether ``event`` shows an older version than the one already stored.

    The executor stores the answer of its own writes at once, so the watch may
    still deliver versions from before that write: applying one would undo
    what the scheduler knows (an admission it made would look released).
    Deletions always count.
    """
    if event.type == "DELETED" or known is None or not objects.is_older(event.object, known):
        return False
    log.debug(
        "skipping a stale event",
        extra={
            "object": event.key,
            "seen": objects.resource_version(event.object),
            "known": objects.resource_version(known),
        },
    )
    return True


__all__ = ["WorkList", "stale"]
