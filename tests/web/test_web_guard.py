"""The access rules of ``rewindtui web`` (no browser): when a token is needed, what passes."""

from __future__ import annotations

import argparse

import pytest

from rewindtui.cli.web import COOKIE, allowed, app_command, is_loopback, resolve_token


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_token_is_made_when_bound_beyond_loopback_only() -> None:
    assert resolve_token(argparse.Namespace(host="127.0.0.1", token_env=None, token_file=None, no_token=False)) is None
    token = resolve_token(argparse.Namespace(host="0.0.0.0", token_env=None, token_file=None, no_token=False))
    assert token and len(token) >= 24
    assert resolve_token(argparse.Namespace(host="0.0.0.0", token_env=None, token_file=None, no_token=True)) is None


def test_token_from_a_file(tmp_path) -> None:
    (tmp_path / "t").write_text("from-file-token\n")
    args = argparse.Namespace(host="127.0.0.1", token_env=None, token_file=str(tmp_path / "t"), no_token=False)
    assert resolve_token(args) == "from-file-token"


def test_allowed() -> None:
    own = {"127.0.0.1:8765"}
    assert allowed("/", {}, {}, {}, None, own) == (True, False)
    assert allowed("/ws", {}, {}, {"Origin": "http://evil.example"}, None, own) == (False, False)
    assert allowed("/ws", {}, {}, {"Origin": "http://127.0.0.1:8765"}, None, own) == (True, False)
    assert allowed("/", {}, {}, {}, "tok", own) == (False, False)
    assert allowed("/", {"token": "tok"}, {}, {}, "tok", own) == (True, True)
    assert allowed("/ws", {}, {COOKIE: "tok"}, {"Origin": "http://127.0.0.1:8765"}, "tok", own) == (True, False)
    assert allowed("/ws", {}, {COOKIE: "nope"}, {}, "tok", own) == (False, False)


def test_the_app_command_carries_the_connection_options_but_no_secret() -> None:
    args = argparse.Namespace(url="http://a:1/", bearer_env="TOKEN_VAR", header=["X-A: b"], host="127.0.0.1")
    command = app_command(args)
    assert "--url http://a:1/" in command and "--bearer-env TOKEN_VAR" in command and "'X-A: b'" in command


def test_dns_rebinding_is_refused_on_loopback() -> None:
    own = {"evil.example:8765", "127.0.0.1:8765"}
    rebound = {"Host": "evil.example:8765", "Origin": "http://evil.example:8765"}
    assert allowed("/ws", {}, {}, rebound, None, own, loopback_only=True) == (False, False)
    assert allowed("/", {}, {}, {"Host": "evil.example:8765"}, None, own, loopback_only=True) == (False, False)
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
        assert allowed("/", {}, {}, {"Host": host}, None, own, loopback_only=True) == (True, False)
