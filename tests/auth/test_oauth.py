"""OAuth2 against a local Authlib authorization server and an a2a-sdk agent that wants its tokens:
client credentials (endpoints by OIDC discovery), the device-code login (`rewindtui auth login`),
tokens cached 0600 and refreshed, `auth logout` revoking them; secrets go only where they belong
and never into output."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import httpx
import pytest
from oauth_stack import CC_ID, CC_SECRET, DEVICE_ID, Stack

from clirun import isolate, runner
from rewindtui.base.dirs import default_data_dir
from rewindtui.cli import auth as auth_command
from rewindtui.client.oauth import TOKENS_FILE


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("CC_SECRET", CC_SECRET)
    return runner(capsys)


def _agent_tokens(stack: Stack) -> list[str | None]:
    return [auth for path, auth in stack.guard.seen if path != "/.well-known/agent-card.json"]


def test_client_credentials_by_oidc_discovery(stack: Stack, cli) -> None:
    flags = [
        "--url",
        stack.agent.url + "/",
        "--oauth-client-id",
        CC_ID,
        "--oauth-client-secret-env",
        "CC_SECRET",
        "--oidc-issuer",
        stack.issuer.url,
    ]
    result = cli("send", "hello", "--json", *flags)
    assert result.rc == 0, result.err
    assert any("You said: hello" in r.get("text", "") for r in result.records()[1:])
    # the agent got a bearer token the server issued; the secret went to the token endpoint only
    sent = _agent_tokens(stack)
    assert sent and all(a and a.startswith("Bearer ") and stack.auth.valid(a[7:]) for a in sent)
    assert all(CC_SECRET not in (a or "") for a in sent)
    assert stack.auth.grant_counts() == {"client_credentials": 1}
    # cached: a second command asks for no new token
    assert cli("sessions", *flags).rc == 0
    assert stack.auth.grant_counts() == {"client_credentials": 1}
    cache = default_data_dir() / TOKENS_FILE
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o600
    # nothing printed carries a token or the secret
    token = sent[0][7:]
    assert token not in result.out + result.err and CC_SECRET not in result.out + result.err


def test_a_card_cannot_send_the_client_secret_to_another_origin(stack: Stack, cli) -> None:
    """The card names a token endpoint on another origin (the issuer's port): with a client secret,
    rewindtui refuses to post it there unless the user names that endpoint or issuer."""
    result = cli(
        "send",
        "hello",
        "--url",
        stack.agent.url + "/",
        "--oauth-client-id",
        CC_ID,
        "--oauth-client-secret-env",
        "CC_SECRET",
    )
    assert result.rc == 1
    assert "not the agent's origin" in result.err and "--oauth-token-url" in result.err
    assert stack.auth.seen == [] or all(path != "/token" for path, _, _ in stack.auth.seen)
    assert _agent_tokens(stack) == []


def test_without_a_token_the_agent_refuses_and_rewindtui_says_why(stack: Stack, cli) -> None:
    result = cli("send", "hello", "--url", stack.agent.url + "/")
    assert result.rc == 1 and "401" in result.err


def _login(stack: Stack, settings_flags: list[str], deny: bool = False) -> tuple[int, list[str]]:
    """`rewindtui auth login` in-process; the 'user' approves the code shown, through the server's
    verification endpoint, from another thread (as a person would in a browser)."""
    import asyncio

    from rewindtui.cli.main import _settings_flags, build_parser
    from rewindtui.config.settings import load_settings

    shown: list[str] = []
    real = auth_command.show_device_prompt

    def prompt(uri: str, code: str, complete: str | None) -> None:
        shown.extend([uri, code])
        form = {"user_code": code, **({"deny": "1"} if deny else {})}
        threading.Thread(target=lambda: httpx.post(uri, data=form), daemon=True).start()
        real(uri, code, complete)

    args = build_parser().parse_args(["auth", "login", *settings_flags])
    settings = load_settings(_settings_flags(args))
    auth_command.show_device_prompt = prompt
    try:
        return asyncio.run(auth_command.run(settings, "login")), shown
    finally:
        auth_command.show_device_prompt = real


def test_device_code_login_then_commands_use_and_refresh_the_token_and_logout_revokes(
    short_stack: Stack, cli, capsys
) -> None:
    stack = short_stack
    flags = ["--url", stack.agent.url + "/", "--oauth-client-id", DEVICE_ID]
    # before any login, commands say what to do
    before = cli("sessions", *flags)
    assert before.rc == 1 and "rewindtui auth login" in before.err

    rc, shown = _login(stack, flags)
    assert rc == 0
    uri, code = shown
    assert uri == stack.issuer.url + "/activate" and code
    err = capsys.readouterr().err
    assert f"open {uri} and enter the code {code}" in err
    assert stack.auth.grant_counts()["urn:ietf:params:oauth:grant-type:device_code"] >= 1

    # tokens expire at once here: each command renews them with the (rotating) refresh token
    for text in ("one", "two"):
        result = cli("send", text, "--json", *flags)
        assert result.rc == 0, result.err
    assert stack.auth.grant_counts().get("refresh_token", 0) >= 2
    assert all(a and stack.auth.valid(a[7:]) or a is None for a in _agent_tokens(stack)[-1:])

    status = cli("auth", "status", *flags)
    assert status.rc == 0 and "signed in" in status.out and "renewable" in status.out
    cached = [t for t in stack.auth.tokens if not t.is_revoked()]
    assert cached and all(t["access_token"] not in status.out for t in stack.auth.tokens)

    out = cli("auth", "logout", *flags)
    assert out.rc == 0 and "revoked" in out.out
    assert all(t.is_revoked() for t in stack.auth.tokens if t.get("refresh_token"))  # the server revoked them
    after = cli("sessions", *flags)
    assert after.rc == 1 and "rewindtui auth login" in after.err


def test_a_denied_device_login_is_said(stack: Stack, cli) -> None:
    rc_shown = None
    from rewindtui.client.auth import AuthError

    with pytest.raises(AuthError, match="denied"):
        rc_shown = _login(stack, ["--url", stack.agent.url + "/", "--oauth-client-id", DEVICE_ID], deny=True)
    assert rc_shown is None
    assert (
        not (default_data_dir() / TOKENS_FILE).exists()
        or DEVICE_ID not in (default_data_dir() / TOKENS_FILE).read_text()
    )


def test_a_server_that_takes_the_secret_in_the_form_only(cli) -> None:
    """Discovery says client_secret_post only: the secret goes in the form (to the token endpoint)."""
    from oauth_stack import start_stack

    stack, running = start_stack(client_auth="client_secret_post")
    try:
        flags = [
            "--url",
            stack.agent.url + "/",
            "--oauth-client-id",
            CC_ID,
            "--oauth-client-secret-env",
            "CC_SECRET",
            "--oidc-issuer",
            stack.issuer.url,
        ]
        result = cli("send", "hello", *flags)
        assert result.rc == 0, result.err
        (token_request,) = [(form, auth) for path, form, auth in stack.auth.seen if path == "/token"]
        assert token_request[0]["client_secret"] == CC_SECRET and token_request[1] is None
    finally:
        for served in running:
            served.stop()


def test_oauth_from_the_config_file(stack: Stack, tmp_path: Path, cli) -> None:
    config = tmp_path / "config.toml"  # the file isolate() points REWINDTUI_CONFIG at
    config.write_text(
        f'url = "{stack.agent.url}/"\n[oauth]\nclient_id = "{CC_ID}"\nclient_secret_env = "CC_SECRET"\n'
        f'oidc_issuer = "{stack.issuer.url}"\n'
    )
    result = cli("send", "from the config")
    assert result.rc == 0, result.err
    assert stack.auth.grant_counts() == {"client_credentials": 1}


def test_a_plain_secret_in_the_config_file_is_refused(tmp_path: Path, cli) -> None:
    (tmp_path / "config.toml").write_text('[oauth]\nclient_id = "x"\nclient_secret = "plain"\n')
    result = cli("sessions", "--url", "http://127.0.0.1:9/")
    assert result.rc == 2 and "oauth.client_secret" in result.err and "client_secret_env" in result.err
