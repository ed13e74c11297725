"""Where the visibility API listens: Kueue's visibilityServer, the gate, the command line."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.config import parse_configuration
from scheduler.visibility.settings import InvalidAddress, Listen, listen_address


def config(**fields: Any) -> Any:
    return parse_configuration(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **fields}
    )


def test_kueues_defaults_every_interface_port_8082() -> None:
    assert listen_address(None, None) == Listen("0.0.0.0", 8082)
    assert listen_address(config(), None) == Listen("0.0.0.0", 8082)


def test_the_configuration_chooses_address_and_port() -> None:
    chosen = config(visibilityServer={"bindAddress": "127.0.0.1", "bindPort": 9444})
    assert listen_address(chosen, None) == Listen("127.0.0.1", 9444)
    assert listen_address(config(visibilityServer={"bindPort": 9444}), None) == Listen(
        "0.0.0.0", 9444
    )


def test_the_command_line_overrides_and_says_so() -> None:
    chosen = config(visibilityServer={"bindPort": 9444})
    assert listen_address(chosen, "127.0.0.1:0") == Listen("127.0.0.1", 0, overridden=True)
    assert listen_address(None, "[::1]:8443") == Listen("::1", 8443)


def test_the_feature_gate_turns_it_off() -> None:
    assert listen_address(config(featureGates={"VisibilityOnDemand": False}), "1.2.3.4:1") is None
    on = config(featureGates={"VisibilityOnDemand": True})
    assert listen_address(on, None) == Listen("0.0.0.0", 8082)


@pytest.mark.parametrize(
    ("fields", "flag", "message"),
    [
        ({"visibilityServer": {"bindPort": 0}}, None, "bindPort: must be 1..65535"),
        ({"visibilityServer": {"bindAddress": "host"}}, None, "'host' is not an IP address"),
        ({}, "localhost:80", "--visibility-bind-address: 'localhost' is not an IP address"),
        ({}, "127.0.0.1", "expected HOST:PORT"),
        ({}, "127.0.0.1:70000", "above 65535"),
    ],
)
def test_what_cannot_be_listened_on_is_refused(
    fields: dict[str, Any], flag: str | None, message: str
) -> None:
    with pytest.raises(InvalidAddress, match=message):
        listen_address(config(**fields), flag)
