"""Forks of the same turn get names that tell them apart: ``Fork of hello @ turn 2``, then
``... (2)``, ``... (3)`` -- on the embedded server's real SQLite store, over loopback."""

from __future__ import annotations

import httpx
from srvkit import A2A, Api, Turn

from rewindtui.server.service.rewinds import distinct_name


def test_distinct_name_takes_the_first_free_number():
    assert distinct_name("Fork of a @ turn 2", set()) == "Fork of a @ turn 2"
    assert distinct_name("Fork of a @ turn 2", {"Fork of a @ turn 2"}) == "Fork of a @ turn 2 (2)"
    taken = {"x", "x (2)", "x (4)"}
    assert distinct_name("x", taken) == "x (3)"


def test_two_forks_of_one_turn_have_distinct_names(server, http: httpx.Client) -> None:
    a2a, api = A2A(http, server.agent_url, "1.0"), Api(http, server.api_url)
    sid = "sess-fork-names"
    first = Turn(a2a.stream("hello", sid))
    second = Turn(a2a.stream("and more", sid))
    assert first.invocation_id != second.invocation_id
    names = []
    for _ in range(3):
        resp = api.post(f"/sessions/{sid}/fork", {"rewind_before_invocation_id": second.invocation_id})
        assert resp.status_code == 201, resp.text
        names.append(resp.json()["data"]["name"])
    assert names == ["Fork of hello @ turn 2", "Fork of hello @ turn 2 (2)", "Fork of hello @ turn 2 (3)"]
    listed = {s["name"] for s in api.get("/sessions").json()["data"]}
    assert set(names) <= listed
