"""Auth that stays home: named options from flags, environment and config; credentials and
configured headers only to the configured origins (a card pointing elsewhere, a redirect); which
scheme a refusing server wants; secrets redacted in errors and logs, never in the settings' repr."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent / "a2a_servers"))

from binding_servers import Recorder, card_json_10, card_only_app

from asgi_thread import ServeInThread
from rewindtui.chat import Chat, TurnRefused
from rewindtui.client.a2a_client import A2AClient, ServerConfig, Unsupported
from rewindtui.client.auth import CredentialScope, redact
from rewindtui.config.settings import Settings, SettingsError, load_settings

SECRET = "s3cret-token-value-42"


def settings(flags=None, env=None, config: Path | None = None, tmp_path: Path | None = None) -> Settings:
    env = dict(env or {})
    if config is not None:
        env["REWINDTUI_CONFIG"] = str(config)
    elif tmp_path is not None:
        empty = tmp_path / "empty.toml"
        empty.write_text("")
        env["REWINDTUI_CONFIG"] = str(empty)
    return load_settings(flags or {}, env)


# -- options ---------------------------------------------------------------------------------------
def test_bearer_from_an_environment_variable(tmp_path):
    s = settings({"url": "http://a.test/", "bearer_env": "MY_TOKEN"}, {"MY_TOKEN": SECRET}, tmp_path=tmp_path)
    assert s.auth is not None and s.auth.describe() == "bearer token from $MY_TOKEN"
    assert s.credentials == {"Authorization": f"Bearer {SECRET}"}
    assert SECRET not in repr(s) and SECRET not in repr(s.auth)


def test_api_key_and_basic_from_files_and_config(tmp_path):
    (tmp_path / "key").write_text("k-123456\n")
    s = settings(
        {"url": "http://a.test/", "api_key_file": str(tmp_path / "key"), "api_key_header": "X-Key"}, tmp_path=tmp_path
    )
    assert s.credentials == {"X-Key": "k-123456"}
    config = tmp_path / "config.toml"
    (tmp_path / "pw").write_text("pa55word\n")
    config.write_text('url = "http://a.test/"\n[auth]\nbasic_user = "alice"\nbasic_password_file = "pw"\n')
    s = settings(config=config)
    assert s.auth.describe().startswith("HTTP Basic as alice")
    assert s.credentials == {"Authorization": "Basic YWxpY2U6cGE1NXdvcmQ="}  # alice:pa55word, file relative to config


def test_environment_names_the_option(tmp_path):
    s = settings({"url": "http://a.test/"}, {"REWINDTUI_API_KEY_ENV": "K", "K": "abcdef"}, tmp_path=tmp_path)
    assert s.credentials == {"X-API-Key": "abcdef"}
    # a flag's option replaces the environment's as a whole
    s = settings(
        {"url": "http://a.test/", "bearer_env": "T"},
        {"REWINDTUI_API_KEY_ENV": "K", "K": "abcdef", "T": "tttt"},
        tmp_path=tmp_path,
    )
    assert s.credentials == {"Authorization": "Bearer tttt"}


@pytest.mark.parametrize(
    "flags, env, config, message",
    [
        ({"bearer_env": "NOPE"}, {}, "", "--bearer-env: the environment variable NOPE is not set"),
        ({"bearer_env": "T", "api_key_env": "T"}, {"T": "x"}, "", "give one auth option"),
        ({"basic_password_env": "T"}, {"T": "xxxx"}, "", "HTTP Basic needs a user name too"),
        ({"bearer_env": "not a name"}, {}, "", "expected the name of an environment variable"),
        ({"bearer_file": "/nonexistent/token"}, {}, "", "secret file /nonexistent/token not found"),
        ({}, {}, '[auth]\ntoken = "abc"\n', "does not read secrets from its config file"),
        ({}, {}, '[auth]\nbearer_env = "A"\nbearer_file = "b"\n', "give the secret one way, not both"),
    ],
)
def test_bad_auth_settings_say_where_and_why(tmp_path, flags, env, config, message):
    path = tmp_path / "config.toml"
    path.write_text(config)
    with pytest.raises(SettingsError, match=message):
        settings({"url": "http://a.test/", **flags}, env, config=path)


# -- scoping ---------------------------------------------------------------------------------------
def test_scope_by_origin_and_redirects():
    import httpx

    scope = CredentialScope.for_urls(["http://home.test:8080/a2a/"], {"Authorization": "Bearer x" * 3, "X-Team": "t"})
    for url, sent in [
        ("http://home.test:8080/api/sessions", True),
        ("http://home.test:8081/api/sessions", False),
        ("https://home.test:8080/", False),
        ("http://other.test/", False),
    ]:
        request = httpx.Request("GET", url, headers={"Authorization": "Bearer leaked", "X-Team": "t"})
        scope.apply(request)
        assert ("Authorization" in request.headers and "X-Team" in request.headers) is sent, url
        assert sent or "leaked" not in str(request.headers)


async def test_a_card_pointing_elsewhere_gets_no_credentials(tmp_path):
    """The card's rewind extension names an ``api`` on another origin: it is not used; on a
    redirect the user's bearer token, API key header, configured headers and user id stay home."""
    other = Recorder()
    with ServeInThread(other) as elsewhere:
        extension = {
            "uri": "urn:rewindtui:ext:rewind:v1",
            "params": {"rewind": ["rest"], "fork": True, "api": elsewhere.url + "/api"},
        }
        home_seen = Recorder()
        card = card_json_10("http://placeholder/", extensions=[extension])
        with ServeInThread(card_only_app(card, home_seen)) as home:
            card["supportedInterfaces"][0]["url"] = home.url + "/"
            config = ServerConfig(
                url=home.url + "/",
                user_id="alice",
                headers={"X-Team": "blue"},
                credentials={"Authorization": f"Bearer {SECRET}", "X-API-Key": "key-0001"},
                local_store=tmp_path / "s.db",
            )
            async with A2AClient(config) as client:
                caps = await client.connect()
                # an API on an origin the user did not configure is not used at all (the user id
                # would go there in ?user_id=)
                assert caps.api is None and not caps.can_rewind
                assert config.refused_api == elsewhere.url + "/api"
                with pytest.raises(Unsupported):
                    await client.list_sessions()
                # a redirect from home to elsewhere: the credentials are taken off on the way
                await client._request("GET", home.url + "/x", params={"to": elsewhere.url + "/landing"})
    assert home_seen.seen and all(s.headers.get("authorization") == f"Bearer {SECRET}" for s in home_seen.seen)
    assert all(s.headers.get("x-team") == "blue" and s.headers.get("x-user-id") == "alice" for s in home_seen.seen)
    assert [s.path for s in other.seen] == ["/landing"]
    for seen in other.seen:
        assert not {"authorization", "x-api-key", "x-team", "x-user-id"} & set(seen.headers), seen


def _guarded_app(card: dict) -> Starlette:
    async def card_endpoint(request: Request) -> Response:
        return JSONResponse(card)

    async def refuse(request: Request) -> Response:
        # echoes what it was sent, as some servers do: the secret must not reach the user's screen
        given = request.headers.get("authorization", "")
        return JSONResponse({"error": f"bad credentials {given}"}, status_code=401)

    return Starlette(
        routes=[Route("/.well-known/agent-card.json", card_endpoint), Route("/", refuse, methods=["POST"])]
    )


async def test_a_refusal_names_the_wanted_scheme_and_hides_the_secret(tmp_path, caplog):
    card = card_json_10("http://placeholder/")
    card["securitySchemes"] = {
        "corp": {"apiKeySecurityScheme": {"location": "header", "name": "X-Corp-Key"}},
        "sso": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://sso.example/.well-known"}},
    }
    card["securityRequirements"] = [{"schemes": {"corp": {"list": []}}}]
    with ServeInThread(_guarded_app(card)) as served:
        card["supportedInterfaces"][0]["url"] = served.url + "/"
        s = settings({"url": served.url + "/", "bearer_env": "TOK"}, {"TOK": SECRET}, tmp_path=tmp_path)
        async with A2AClient(s.server_config()) as client:
            chat = Chat(client)
            await chat.open(None)
            with pytest.raises(TurnRefused) as info:
                await chat.send("hello")
    text = str(info.value)
    assert "HTTP 401" in text and "bad credentials ***" in text and SECRET not in text
    assert (
        "the agent card asks for corp: API key in header X-Corp-Key (give --api-key-env VAR --api-key-header "
        "X-Corp-Key)" in text
    )
    assert "sent: bearer token from $TOK" in text
    assert chat.conversation.items == []  # nothing shown that the server did not take
    with caplog.at_level(logging.INFO):
        logging.getLogger("anything").info("a header was %s", f"Bearer {SECRET}")
    assert SECRET not in caplog.text and "a header was ***" in caplog.text
    assert redact(f"x {SECRET} y") == "x *** y"


def test_agent_names_are_escaped_in_the_controller_paths(tmp_path):
    s = settings({"kagent": "http://k.test:8083", "agent": "../.."}, tmp_path=tmp_path)
    assert s.url == "http://k.test:8083/api/a2a/%2E%2E/%2E%2E/"
    assert all("/../" not in u for u in s.server_config().fallback_urls)
