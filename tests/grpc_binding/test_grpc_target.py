"""Where a card's gRPC URL points, whether it gets TLS, and whether credentials go there."""

from __future__ import annotations

import pytest

from rewindtui.a2a.card import NoUsableInterface, choose_interface
from rewindtui.client.auth import CredentialScope
from rewindtui.client.errors import ClientError
from rewindtui.client.transports.grpc import (
    GrpcCredentialsWithheld,
    call_metadata,
    check_credentials,
    credentials_allowed,
    parse_target,
)

HERE = "http://agents.example:8080/a2a/"
SECRET = {"Authorization": "Bearer s3cret-value"}


@pytest.mark.parametrize(
    ("url", "address", "tls"),
    [
        ("127.0.0.1:50051", "127.0.0.1:50051", False),
        ("localhost:50051", "localhost:50051", False),
        ("agents.example:443", "agents.example:443", True),
        ("grpc://agents.example:50051", "agents.example:50051", False),
        ("grpcs://agents.example", "agents.example:443", True),
        ("https://agents.example:8443/", "agents.example:8443", True),
        ("http://[::1]:50051", "[::1]:50051", False),
    ],
)
def test_targets(url, address, tls):
    target = parse_target(url)
    assert (target.address, target.tls) == (address, tls)


@pytest.mark.parametrize("url", ["", "ftp://x:1", "grpc://:50051", "agents.example"])
def test_unreadable_targets(url):
    with pytest.raises(ClientError):
        parse_target(url)


def test_credentials_go_to_the_configured_origin_only():
    scope = CredentialScope.for_urls([HERE], SECRET)
    beside = parse_target("agents.example:50051")  # TLS (not loopback): the card's host, another port
    assert not credentials_allowed(scope, beside)  # another origin: not configured
    with pytest.raises(GrpcCredentialsWithheld, match="another origin of the host you configured"):
        check_credentials(scope, beside)
    home = parse_target("grpc://agents.example:8080")  # the configured origin itself
    assert credentials_allowed(scope, home) and ("authorization", "Bearer s3cret-value") in call_metadata(scope, home)
    elsewhere = parse_target("grpc.other.example:443")
    assert not credentials_allowed(scope, elsewhere)
    assert call_metadata(scope, elsewhere) == (("a2a-version", "1.0"),)
    with pytest.raises(GrpcCredentialsWithheld, match="not an origin you configured"):
        check_credentials(scope, elsewhere)
    check_credentials(CredentialScope.for_urls([HERE], {}), elsewhere)  # nothing to withhold: no refusal


def test_the_same_host_setting_allows_a_port_beside_no_less_protected():
    scope = CredentialScope.for_urls([HERE], SECRET)
    scope.grpc_same_host = True
    beside = parse_target("agents.example:50051")
    assert credentials_allowed(scope, beside)
    assert ("authorization", "Bearer s3cret-value") in call_metadata(scope, beside)
    assert not credentials_allowed(scope, parse_target("grpc.other.example:443"))  # another host: never
    # an https home does not lend its credentials to a plaintext port on the same host
    tls_home = CredentialScope.for_urls(["https://agents.example/"], SECRET)
    tls_home.grpc_same_host = True
    assert not credentials_allowed(tls_home, parse_target("grpc://agents.example:50051"))
    with pytest.raises(GrpcCredentialsWithheld, match="not protected by TLS"):
        check_credentials(tls_home, parse_target("grpc://agents.example:50051"))
    assert credentials_allowed(tls_home, parse_target("grpcs://agents.example:50051"))


def test_grpc_is_chosen_only_alone_or_when_asked():
    grpc = {"url": "agents.example:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    http = {"url": HERE, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert choose_interface({"supportedInterfaces": [grpc, http]}, HERE).binding == "JSONRPC"
    asked = choose_interface({"supportedInterfaces": [grpc, http]}, HERE, binding="grpc")
    assert (asked.binding, asked.url) == ("GRPC", "agents.example:50051")  # its own address, not the card's
    alone = choose_interface({"supportedInterfaces": [grpc]}, HERE)
    assert alone.binding == "GRPC"
    with pytest.raises(NoUsableInterface, match="no GRPC interface"):
        choose_interface({"supportedInterfaces": [http]}, HERE, binding="grpc")
