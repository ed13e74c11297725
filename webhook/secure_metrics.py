"""The webhook's ``/metrics``: HTTPS for callers the cluster allows (docs/metrics.md#access).

The webhook's admission port answers the API server only; its metrics are
served on their own address (``--metrics-bind-address``), as the
scheduler's are, through :mod:`scheduler.kube.secure_serving` with a
TokenReview and SubjectAccessReview per caller (cached).  This module and
:mod:`webhook.kube_lookup` are the only ones of the ``webhook`` package that
reach the cluster (see the import-linter contracts in ``pyproject.toml``).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from scheduler.kube.access_review import AccessReviewer
from scheduler.kube.client import connect
from scheduler.kube.rest import Rest
from scheduler.kube.secure_serving import (
    Endpoint,
    add_metrics_arguments,
    endpoint_for,
    metrics_app,
    serve,
    stop,
)

if TYPE_CHECKING:  # settings reads this module's flags: no import cycle at run time
    from webhook.settings import WebhookSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The metrics flags, as every kuota process has them (not served by default)."""
    add_metrics_arguments(parser, default_address="")


def endpoint(settings: WebhookSettings) -> Endpoint | None | str:
    """Where the settings ask /metrics to be served, None for nowhere, or what is wrong: pure."""
    return endpoint_for(
        settings.metrics_address,
        secure=settings.metrics_secure,
        cert_dir=settings.metrics_cert_dir,
        flag="--metrics-bind-address",
    )


@asynccontextmanager
async def serving(settings: WebhookSettings, render: Callable[[], bytes]) -> AsyncIterator[None]:
    """Serve /metrics while the context is open (nothing when no address is set)."""
    where = endpoint(settings)
    if not isinstance(where, Endpoint):
        yield
        return
    if not where.secure:
        started = await serve(metrics_app(render, None), where, name="metrics")
        try:
            yield
        finally:
            await stop(*started)
        return
    async with connect(settings.kubeconfig) as api:
        started = await serve(metrics_app(render, AccessReviewer(Rest(api))), where, name="metrics")
        try:
            yield
        finally:
            await stop(*started)


__all__ = ["add_arguments", "endpoint", "serving"]
