"""Whether waitForPodsReady is on, and with which settings: pure.

In ``v1beta2`` the section's presence turns it on and Kueue's defaulting
always adds it, so it is on unless the feature gate
``DisableWaitForPodsReady`` is set (docs/configuration.md#waitforpodsready).
A missing Configuration (no ``--config``) is Kueue's default one: on, with
the default settings.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from scheduler.api.config import Configuration, WaitForPodsReady

DISABLE_GATE: Final = "DisableWaitForPodsReady"


def wait_for_pods_ready(config: Configuration | None) -> WaitForPodsReady | None:
    """The settings in force, or None when waitForPodsReady is off: pure."""
    if config is None:
        return WaitForPodsReady(recovery_timeout=WaitForPodsReady().timeout)
    if config.wait_for_pods_ready is None or config.feature_gates.get(DISABLE_GATE, False):
        return None
    return config.wait_for_pods_ready


def recovery_timeout(settings: WaitForPodsReady) -> timedelta | None:
    """The time allowed to get back to ready, None when ``0s`` turns recovery off: pure.

    Unset means ``timeout`` (the parser fills it in; a hand-made settings
    object may leave it None).
    """
    value = settings.recovery_timeout
    if value is None:
        return settings.timeout
    return value if value > timedelta(0) else None


def backoff_seconds(settings: WaitForPodsReady, count: int) -> int:
    """The requeue delay after the ``count``-th timeout (count >= 1), without jitter: pure.

    ``backoffBaseSeconds`` × 2^(count-1), capped by ``backoffMaxSeconds``
    (0: no cap), as Kueue's backoff computes it (docs/scheduling.md#eviction-and-requeue).
    """
    strategy = settings.requeuing_strategy
    delay: int = strategy.backoff_base_seconds * (1 << max(0, count - 1))
    if strategy.backoff_max_seconds > 0:
        delay = min(delay, strategy.backoff_max_seconds)
    return delay


__all__ = ["DISABLE_GATE", "backoff_seconds", "recovery_timeout", "wait_for_pods_ready"]
