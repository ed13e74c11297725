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

Proxy settings from the environment (``HTTPS_PROXY``, ``NO_PROXY``) are read
once, when the client is made, as kubectl reads them: kubernetes_asyncio's
session asks aiohttp to read them (and ``~/.netrc``) again for every request,
in a worker thread, which cost the scheduler a thread hand-off and a file read
per API call (2 % of its samples, and the GIL traffic, in Kueue's benchmark).
A kubeconfig's ``proxy-url`` still wins.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aiohttp
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


READ_BUFFER_BYTES = 2**21
"""As kubernetes_asyncio sizes it: a watch event carries a whole object (etcd allows 1.5 MiB)."""


def proxy_from_environment(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``<scheme>_proxy``, lower case first,
    unless ``no_proxy`` covers its host: Python's own reading), None for a direct one."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


def _with_proxy_read_once(api: client.ApiClient) -> client.ApiClient:
    """``api`` with a session that does not consult the environment per request."""
    rest = api.rest_client
    if not rest.proxy and api.configuration.host:
        rest.proxy = proxy_from_environment(api.configuration.host) or ""
    connector = rest.pool_manager.connector
    rest.pool_manager.detach()  # the connector (its TLS context and pool) is kept
    rest.pool_manager = aiohttp.ClientSession(
        connector=connector, trust_env=False, read_bufsize=READ_BUFFER_BYTES
    )
    return api


async def new_api_client(
    kubeconfig: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> client.ApiClient:
    """A new ``ApiClient``; the caller closes it (``await api.close()``)."""
    configuration = await load_configuration(kubeconfig, environ)
    return _with_proxy_read_once(client.ApiClient(configuration=configuration))


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
    return _with_proxy_read_once(client.ApiClient(configuration=configuration))
