"""The front proxy's identity: believed only from its certificate, read from its headers."""

from __future__ import annotations

import json

from multidict import CIMultiDict

from scheduler.visibility.identity import FrontProxy, User, authenticate, front_proxy

PROXY = front_proxy(
    {
        "requestheader-client-ca-file": "-----BEGIN CERTIFICATE-----\n...",
        "requestheader-allowed-names": json.dumps(["front-proxy-client"]),
        "requestheader-username-headers": json.dumps(["X-Remote-User"]),
        "requestheader-group-headers": json.dumps(["X-Remote-Group"]),
        "requestheader-extra-headers-prefix": json.dumps(["X-Remote-Extra-"]),
        "requestheader-uid-headers": json.dumps(["X-Remote-Uid"]),
    }
)


def headers(*pairs: tuple[str, str]) -> CIMultiDict[str]:
    return CIMultiDict(pairs)


def test_the_caller_comes_from_the_headers_of_an_allowed_proxy() -> None:
    user = authenticate(
        PROXY,
        "front-proxy-client",
        headers(
            ("x-remote-user", "alice"),
            ("X-Remote-Group", "team-a"),
            ("X-Remote-Group", "system:authenticated"),
            ("X-Remote-Uid", "42"),
            ("X-Remote-Extra-Scopes", "view"),
            ("X-Remote-Extra-Scopes", "edit"),
            ("X-Remote-Extra-Acme.com%2fProject", "p1"),
        ),
    )
    assert user == User(
        name="alice",
        groups=("team-a", "system:authenticated"),
        uid="42",
        extra=(("acme.com/project", ("p1",)), ("scopes", ("view", "edit"))),
    )


def test_authenticated_is_added_when_the_proxy_leaves_it_out() -> None:
    user = authenticate(PROXY, "front-proxy-client", headers(("X-Remote-User", "bob")))
    assert user is not None and user.groups == ("system:authenticated",)


def test_nothing_is_believed_without_the_proxys_certificate_or_a_user() -> None:
    asked = headers(("X-Remote-User", "root"), ("X-Remote-Group", "system:masters"))
    assert authenticate(PROXY, None, asked) is None
    assert authenticate(PROXY, "someone-else", asked) is None
    assert authenticate(PROXY, "front-proxy-client", headers()) is None
    assert authenticate(FrontProxy(), "front-proxy-client", asked) is None
    anyone = FrontProxy(client_ca="pem", username_headers=("X-Remote-User",))
    assert authenticate(anyone, "any-name", asked) == User("root", ("system:authenticated",))


def test_malformed_settings_read_as_none() -> None:
    assert front_proxy({"requestheader-allowed-names": "not json"}).allowed_names == ()
    assert front_proxy({}) == FrontProxy()
