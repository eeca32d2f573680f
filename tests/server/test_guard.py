"""The local server is not a door: what a web page, a rebinding DNS name or a stranger can do.

Each request is real HTTP over loopback to a running server; "nothing happened" is checked
on the server afterwards (no session was created, no turn ran).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Turn

from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions

TURN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "message/send",
    "params": {
        "message": {"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}
    },
}


def sessions(srv: EmbeddedServer, user: str = "local", token: str | None = None) -> list:
    headers = {"X-User-Id": user, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.get(srv.api_url + "/sessions", headers=headers).json()["data"]


def test_a_web_page_cannot_post_a_simple_request(server, http):
    """A cross-origin form / fetch(no-cors) sends text/plain with an Origin: refused, nothing runs."""
    user = f"victim-{uuid.uuid4().hex[:6]}"
    body = json.dumps(TURN)
    for headers in (
        {"Content-Type": "text/plain", "Origin": "https://evil.example"},
        {"Content-Type": "text/plain"},  # no Origin (some browsers omit it): still not JSON
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "application/json", "Origin": "https://evil.example"},
        {"Content-Type": "application/json", "Origin": "null"},
        {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
    ):
        resp = http.post(server.agent_url, content=body, headers={"X-User-Id": user, **headers})
        assert resp.status_code in (403, 415), (headers, resp.status_code)
        assert "error" in resp.json()
        rest = http.post(server.api_url + "/sessions", content="{}", headers={"X-User-Id": user, **headers})
        assert rest.status_code in (403, 415)
    assert sessions(server, user) == []  # no session, no turn
    # the same request as a program sends it works (same origin is fine too)
    ok = http.post(server.agent_url, json=TURN, headers={"X-User-Id": user, "Origin": server.base_url})
    assert ok.json()["result"]["status"]["state"] == "completed"
    assert len(sessions(server, user)) == 1


def test_wrong_content_type_on_the_a2a_endpoint_is_a_jsonrpc_error(server, http):
    resp = http.post(server.agent_url, content=b"{}", headers={"Content-Type": "text/plain"})
    assert resp.status_code == 415
    assert resp.json()["error"]["code"] == -32005  # ContentTypeNotSupported


def test_wrong_content_type_on_the_http_json_routes_is_that_bindings_error(server, http):
    # A2A 1.0 HTTP+JSON: an AIP-193 error body, ContentTypeNotSupported mapped to 415 (the TCK's
    # test_content_type_not_supported_returns_415 posts exactly this)
    body = json.dumps({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}], "messageId": uuid.uuid4().hex}})
    resp = http.post(
        server.agent_url.rstrip("/") + "/message:send",
        content=body.encode(),
        headers={"Content-Type": "text/plain", "A2A-Version": "1.0"},
    )
    assert resp.status_code == 415
    error = resp.json()["error"]
    assert error["code"] == 415 and error["status"] and "application/json" in error["message"]
    assert [d["reason"] for d in error["details"]] == ["CONTENT_TYPE_NOT_SUPPORTED"]
    rest = http.post(server.base_url + "/api/sessions", content=b"{}", headers={"Content-Type": "text/plain"})
    assert rest.status_code == 415 and isinstance(rest.json()["error"], str)  # our REST API keeps its shape


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "192.168.1.20:{port}", "[fe80::1]:{port}"])
def test_dns_rebinding_is_refused(server, http, host):
    """A page whose name now resolves to 127.0.0.1 still says its own name in Host."""
    port = server.port
    for url in (server.api_url + "/sessions", server.agent_url + ".well-known/agent-card.json"):
        resp = http.get(url, headers={"Host": host.format(port=port)})
        assert resp.status_code == 403 and "Host" in resp.json()["error"]
    for name in ("localhost", "127.0.0.1", "[::1]"):
        assert http.get(server.api_url + "/sessions", headers={"Host": f"{name}:{port}"}).status_code == 200


def test_token_required_when_set(tmp_path: Path, http):
    token = "s3cret-" + uuid.uuid4().hex
    with EmbeddedServer(tmp_path / "d", options=ServerOptions(token=token)) as srv:
        # the card is public (it says a bearer token is needed)...
        card = http.get(srv.agent_url + ".well-known/agent-card.json")
        assert card.status_code == 200
        assert card.json()["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
        # ...nothing else is, without the token
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": token},
            {"Authorization": f"Basic {token}"},
        ):
            assert http.get(srv.api_url + "/sessions", headers=headers).status_code == 401
            resp = http.post(srv.agent_url, json=TURN, headers=headers)
            assert resp.status_code == 401 and resp.headers["www-authenticate"].startswith("Bearer")
        assert http.get(srv.api_url + "/sessions", params={"token": token}).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(headers=auth, timeout=30) as client:
            assert Turn(A2A(client, srv.agent_url, "1.0").stream("with the token", "tok")).final["status"]["state"] == (
                "completed"
            )
        assert [s["id"] for s in sessions(srv, token=token)] == ["tok"]


def test_binding_beyond_loopback_always_needs_a_token(tmp_path: Path, http):
    with EmbeddedServer(tmp_path / "d", host="0.0.0.0") as srv:
        assert srv.token  # generated, since none was given
        assert http.get(srv.api_url + "/sessions").status_code == 401
        assert http.get(srv.api_url + "/sessions", headers={"Authorization": f"Bearer {srv.token}"}).status_code == 200


def test_serve_beyond_loopback_prints_its_token(tmp_path: Path):
    from kit import zygote  # a serve process forked from the tests' zygote (google-adk imported once)

    proc = zygote.spawn(
        ["--host", "0.0.0.0", "--data-dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")},
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("serving on http://127.0.0.1:")
        assert lines[1].startswith("agent URL: http://127.0.0.1:") and "rewindtui --url" in lines[1]
        token = lines[2].split("bearer token: ", 1)[1].split()[0]
        base = lines[0].split("serving on ", 1)[1].strip()
        assert httpx.get(base + "/api/sessions").status_code == 401
        assert httpx.get(base + "/api/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()


def test_user_id_is_a_label_not_a_secret(server, http):
    """Anyone who may talk to the server may name any user: X-User-Id separates, it does not protect."""
    user = f"label-{uuid.uuid4().hex[:6]}"
    Turn(A2A(http, server.agent_url, "0.3", user=user).stream("mine", "label-" + user))
    assert len(sessions(server, user)) == 1  # any client that says the name sees them
    assert all(s["id"] != "label-" + user for s in sessions(server, "someone-else"))
