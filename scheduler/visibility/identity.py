"""Who is asking: the identity the API server's aggregator vouches for: pure.

See docs/visibility.md#who-may-see-what.  Clients never reach the
visibility server directly: the API server authenticates them, then proxies
the request over TLS with its *front-proxy* client certificate and puts the
caller's identity in request headers (``X-Remote-User``, ``X-Remote-Group``,
``X-Remote-Extra-<key>``, ``X-Remote-Uid`` by default).  Those headers are
believed only on a connection whose client certificate was signed by the
front-proxy CA (checked during the TLS handshake) and, when the API server
names them, carries one of the allowed common names; otherwise the request
is unauthenticated (401).  The API server publishes its settings in the
ConfigMap ``kube-system/extension-apiserver-authentication``, which any
extension API server reads (the ``extension-apiserver-authentication-reader``
Role).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol
from urllib.parse import unquote

AUTHENTICATION_CONFIGMAP: Final = ("kube-system", "extension-apiserver-authentication")
AUTHENTICATED: Final = "system:authenticated"


@dataclass(frozen=True, slots=True)
class FrontProxy:
    """The API server's front-proxy settings; an empty ``client_ca`` authenticates no one."""

    client_ca: str = ""
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_prefixes: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()


def _names(data: Mapping[str, str], key: str) -> tuple[str, ...]:
    """A JSON list of strings from the ConfigMap (absent or malformed: empty): pure."""
    try:
        value = json.loads(data.get(key) or "[]")
    except ValueError:
        return ()
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def front_proxy(data: Mapping[str, str]) -> FrontProxy:
    """The settings in the ConfigMap's ``data``: pure."""
    return FrontProxy(
        client_ca=data.get("requestheader-client-ca-file") or "",
        allowed_names=_names(data, "requestheader-allowed-names"),
        username_headers=_names(data, "requestheader-username-headers"),
        group_headers=_names(data, "requestheader-group-headers"),
        extra_prefixes=_names(data, "requestheader-extra-headers-prefix"),
        uid_headers=_names(data, "requestheader-uid-headers"),
    )


@dataclass(frozen=True, slots=True)
class User:
    """An authenticated caller, as a SubjectAccessReview names it."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())


class Headers(Protocol):
    """Case-insensitive request headers (aiohttp's ``CIMultiDictProxy``)."""

    def getall(self, key: str, default: list[str]) -> list[str]: ...

    def keys(self) -> Iterable[str]: ...


def _values(headers: Headers, names: Iterable[str]) -> list[str]:
    return [value for name in names for value in headers.getall(name, []) if value]


def authenticate(proxy: FrontProxy, common_name: str | None, headers: Headers) -> User | None:
    """The caller vouched for by the front proxy; None when the request proves nothing: pure.

    ``common_name`` is the CN of the client certificate the TLS handshake
    verified against ``proxy.client_ca`` (None: no certificate).
    """
    if not proxy.client_ca or common_name is None:
        return None
    if proxy.allowed_names and common_name not in proxy.allowed_names:
        return None
    names = _values(headers, proxy.username_headers)
    if not names:
        return None
    groups = _values(headers, proxy.group_headers)
    if AUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    uids = _values(headers, proxy.uid_headers)
    extra: dict[str, list[str]] = {}
    lowered = [prefix.lower() for prefix in proxy.extra_prefixes]
    for header in dict.fromkeys(headers.keys()):
        for prefix in lowered:
            if header.lower().startswith(prefix) and len(header) > len(prefix):
                key = unquote(header[len(prefix) :].lower())
                extra.setdefault(key, []).extend(headers.getall(header, []))
                break
    return User(
        name=names[0],
        groups=tuple(groups),
        uid=uids[0] if uids else "",
        extra=tuple((key, tuple(values)) for key, values in sorted(extra.items())),
    )


__all__ = [
    "AUTHENTICATED",
    "AUTHENTICATION_CONFIGMAP",
    "FrontProxy",
    "Headers",
    "User",
    "authenticate",
    "front_proxy",
]
