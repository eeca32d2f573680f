"""The embedded server takes kagent's REST shapes too (kagent v0.10.x,
go/core/internal/httpserver/handlers/sessions.go): the per-agent session list
(HandleGetSessionsForAgent) and a create body naming ``agent_ref`` and ``user_id``
(HandleCreateSession), so one client path serves both servers."""

from __future__ import annotations

import httpx

from rewindtui.server import EmbeddedServer
from rewindtui.server.shared.paths import AGENT_REF


def test_sessions_of_the_agent_and_a_create_body_in_kagent_s_shape(server: EmbeddedServer, http: httpx.Client) -> None:
    api = server.api_url
    user = {"X-User-Id": "kagent-shapes"}
    made = http.post(
        api + "/sessions",
        json={"agent_ref": AGENT_REF, "user_id": "kagent-shapes", "name": "from kagent's body"},
        headers=user,
    )
    assert made.status_code == 201, made.text
    sid = made.json()["data"]["id"]
    listed = http.get(api + f"/sessions/agent/{AGENT_REF}", headers=user)
    assert listed.status_code == 200
    assert [(s["id"], s["name"]) for s in listed.json()["data"]] == [(sid, "from kagent's body")]
    # the same sessions as the plain list, and only this user's
    assert listed.json()["data"] == http.get(api + "/sessions", headers=user).json()["data"]
    assert http.get(api + f"/sessions/agent/{AGENT_REF}", headers={"X-User-Id": "someone-else"}).json()["data"] == []


def test_another_agent_is_not_found_and_nothing_is_created(server: EmbeddedServer, http: httpx.Client) -> None:
    api = server.api_url
    user = {"X-User-Id": "kagent-shapes-404"}
    missing = http.get(api + "/sessions/agent/kagent/k8s-agent", headers=user)
    assert missing.status_code == 404 and "kagent/k8s-agent not found" in missing.json()["error"]
    refused = http.post(api + "/sessions", json={"agent_ref": "kagent/k8s-agent", "name": "x"}, headers=user)
    assert refused.status_code == 404 and "kagent/k8s-agent" in refused.json()["error"]
    assert http.get(api + "/sessions", headers=user).json()["data"] == []
