"""``/state``'s words (``chat.agent_state``) and its REST route on the embedded server
(``GET /api/sessions/{id}/state``): the state and ADK's rewind delta per turn, only for the
session's owner, offered in the card."""

from __future__ import annotations

import httpx

from kit.servers import embedded_fixture
from rewindtui.a2a import contract
from rewindtui.chat import Chat
from rewindtui.chat.agent_state import change_lines, read_state, value_text
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.state_api import offers_state

server = embedded_fixture("agent-state")


def test_change_lines_say_each_key_once_sorted():
    state = {"b": 2, "a": [1], "gone": None, "same": "x"}
    delta = {"b": 1, "a": None, "gone": None, "same": "x", "new": {"k": "v"}}
    assert change_lines(state, delta) == [
        "a: [1] → null (set after that point)",
        "b: 2 → 1",
        'new: not set → {"k": "v"}',
    ]
    assert change_lines(state, {}) == []


def test_values_are_one_bounded_line():
    text = value_text("\x1b[31mred\n" + "y" * 200, width=30)
    assert len(text) == 30 and "\x1b" not in text and "\n" not in text and text.endswith("…")


async def test_route_answers_state_and_deltas_for_the_owner_only(server):
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
        caps = await client.connect()
        assert offers_state(caps.card)
        chat = Chat(client)
        await chat.send("weather in Oslo")
        await chat.send("hello")
        first, second = chat.conversation.turn_invocations()
        found = await read_state(client, chat.session_id)
        assert found is not None and found.state == {"weather_calls": 1}
        assert found.rewind_changes == {first: {"weather_calls": None}, second: {}}
        url = server.api_url + contract.REST_STATE.format(id=chat.session_id)
        async with httpx.AsyncClient() as http:
            other = await http.get(url, headers={"X-User-Id": "someone-else"})
            missing = await http.get(server.api_url + contract.REST_STATE.format(id="no-such-session"))
        assert other.status_code == 404 and missing.status_code == 404


def test_a_card_without_the_param_does_not_offer_it():
    ext = {"uri": contract.EXTENSION_URI, "params": {contract.PARAM_REWIND: ["a2a"]}}
    assert not offers_state({"capabilities": {"extensions": [ext]}})
    assert not offers_state({}) and not offers_state(None)
    ext["params"][contract.PARAM_STATE] = True
    assert offers_state({"capabilities": {"extensions": [ext]}})


def test_the_start_up_front_has_no_state_route():
    """The server's front serves the store's GET routes while the agent loads (a store reader,
    no runner): the state route is left out there, not broken."""
    from rewindtui.server.http.rest import build_rest_routes
    from rewindtui.server.storage.store_reader import StoreReader

    routes = build_rest_routes(StoreReader(store=None))  # type: ignore[arg-type]
    assert routes and not any(route.path.endswith("/state") for route in routes)
