"""The one place a Kubernetes API client is made.

Every process of kuota that talks to an API server (the scheduler, the
webhook's lookups, the certificate bootstrap, the CLI's live commands) gets
its ``ApiClient`` here, so "which cluster, with which credentials" has one
rule:

1. an explicit kubeconfig path (``--kubeconfig``; a ``:``-separated list is
   merged the way kubectl merges ``$KUBECONFIG``);
2. else ``$KUBECONFIG``;
3. else the in-cluster service account (token and CA mounted into the pod).

What travels over that client is the business of :mod:`scheduler.kube.rest`
(raw JSON on any path); no caller uses the generated model classes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from kubernetes_asyncio import client, config

ApiClient = client.ApiClient
"""kubernetes_asyncio's client; re-exported so callers outside ``scheduler.kube`` can name it."""


def kubeconfig_source(
    kubeconfig: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ
) -> str | None:
    """The kubeconfig to load (explicit, else ``$KUBECONFIG``), None for in-cluster: pure."""
    if kubeconfig:
        return os.fspath(kubeconfig)
    from_env = environ.get("KUBECONFIG", "")
    return from_env if from_env.strip(os.pathsep) else None


async def load_configuration(
    kubeconfig: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> client.Configuration:
    """Connection settings by the rule of the module docstring (reads files)."""
    configuration = client.Configuration()
    source = kubeconfig_source(kubeconfig, environ)
    if source is not None:
        await config.load_kube_config(config_file=source, client_configuration=configuration)
    else:
        config.load_incluster_config(client_configuration=configuration)
    return configuration


async def new_api_client(
    kubeconfig: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> client.ApiClient:
    """A new ``ApiClient``; the caller closes it (``await api.close()``)."""
    return client.ApiClient(configuration=await load_configuration(kubeconfig, environ))


@asynccontextmanager
async def connect(
    kubeconfig: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> AsyncIterator[client.ApiClient]:
    """An ``ApiClient`` for the length of an ``async with`` block."""
    api = await new_api_client(kubeconfig, environ)
    try:
        yield api
    finally:
        await api.close()


async def api_client_from_kubeconfig(kubeconfig: Mapping[str, object]) -> client.ApiClient:
    """A new ``ApiClient`` for a kubeconfig given as data (a worker's, from a Secret).

    The caller closes it.  Embedded credentials only (``*-data``): the loader
    writes them to temporary files for the TLS context.
    """
    configuration = client.Configuration()
    await config.load_kube_config_from_dict(
        config_dict=dict(kubeconfig), client_configuration=configuration
    )
    return client.ApiClient(configuration=configuration)
