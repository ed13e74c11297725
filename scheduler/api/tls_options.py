"""The Configuration's ``tls`` section in OpenSSL's terms (docs/configuration.md).

Kueue names TLS versions and cipher suites as Go's ``crypto/tls`` does
(``VersionTLS12``, ``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``); the webhook
server is Python's ``ssl`` over OpenSSL, which names the same suites its own
way.  This module is the one table between the two: pure data and one pure
function, read by validation (which names are accepted) and by the webhook
server (the SSL context it builds).

TLS 1.3 suites are listed by Go but not configurable, in Go as in OpenSSL's
``set_ciphers``: naming them changes nothing, in Kueue as in kuota.  The
suites OpenSSL 3 no longer offers (RC4, 3DES) are refused: a server that
cannot honour the list must not start with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

TLS13_SUITES: Final = frozenset(
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
)
"""Go's TLS 1.3 suites: accepted, not configurable (always enabled with TLS 1.3)."""

OPENSSL_NAMES: Final = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
}
"""Go's TLS 1.2 suite names (``crypto/tls``, legacy CHACHA20 aliases too) → OpenSSL's."""

NOT_OFFERED: Final = frozenset(
    {
        "TLS_RSA_WITH_RC4_128_SHA",
        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
        "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    }
)
"""Go suite names OpenSSL 3 does not offer: refused."""


def cipher_problem(name: str) -> str | None:
    """Why ``name`` cannot be in ``tls.cipherSuites`` (None: it can): pure."""
    if name in OPENSSL_NAMES or name in TLS13_SUITES:
        return None
    if name in NOT_OFFERED:
        return f'"{name}" (RC4 or 3DES) is not offered by kuota\'s TLS library (OpenSSL 3)'
    return f'cipher suite "{name}" not supported or does not exist (use Go\'s crypto/tls names)'


def openssl_cipher_list(names: Sequence[str]) -> str | None:
    """The OpenSSL cipher string of Go suite names (None: nothing to restrict): pure.

    TLS 1.3 names are dropped (not configurable); the order is kept.
    """
    chosen = [OPENSSL_NAMES[name] for name in names if name in OPENSSL_NAMES]
    return ":".join(dict.fromkeys(chosen)) or None
