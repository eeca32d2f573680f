"""The client against a real HTTP server on loopback (tests/fakeserver.py) that replays captured
response bodies byte for byte and records what the client sent."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from captures import load
from fakeserver import FakeServer, Reply, closed_port, sse_body
from rewindtui.a2a import Dialect, EventKind
from rewindtui.client.a2a_client import (
    REWIND_EXTENSION,
    A2AClient,
    ClientError,
    ConnectFailed,
    HTTPStatusFailed,
    MalformedFrame,
    ServerConfig,
    Unsupported,
    parse_frame,
)
from rewindtui.model import Conversation, extract_messages_from_tasks
from test_conversation_captures import (
    ECHO_TURN,
    INV_10,
    INV_12,
    REPLY_04,
    REPLY_10,
    TURN_02,
    TURN_03,
    TURN_04,
    view,
)

K = "kagent-0.10.4/"
A = "a2a-1.0/"
CARD_PATH = "/.well-known/agent-card.json"
OLD_CARD_PATH = "/.well-known/agent.json"


@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


def kagent_card() -> dict:
    return json.loads(load(K + "01_agent_card.txt").body)


def card_10() -> dict:
    return {
        "name": "echo10",
        "description": "an a2a-sdk 1.x agent",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1/", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True},
    }


def rewind_card(params: dict | None) -> dict:
    card = kagent_card()
    ext: dict = {"uri": REWIND_EXTENSION}
    if params is not None:
        ext["params"] = params
    card["capabilities"] = {"streaming": True, "extensions": [{"uri": "urn:other:ext"}, ext]}
    return card


def make_client(server: FakeServer, **kw) -> A2AClient:
    return A2AClient(ServerConfig(url=server.url + "/", **kw))


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, text
    return text


def paths(server: FakeServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests]


# -- agent card, dialect, capabilities ----------------------------------------------------------
async def test_agent_card_fetch(server):
    server.route("GET", CARD_PATH, Reply.capture(load(K + "01_agent_card.txt")))
    async with make_client(server) as client:
        caps = await client.connect()
        assert await client.connect() is caps  # read once
    assert caps.name == "echo_agent"
    assert caps.dialect is Dialect.V03
    assert caps.rewind_modes == () and not caps.can_rewind and caps.rewind_mode is None
    assert caps.fork is False
    assert caps.card == kagent_card()
    assert paths(server) == [("GET", CARD_PATH)]


async def test_agent_card_falls_back_to_agent_json_on_404(server):
    server.route("GET", OLD_CARD_PATH, Reply.json(kagent_card()))
    async with make_client(server) as client:
        caps = await client.connect()
    assert caps.name == "echo_agent"
    assert paths(server) == [("GET", CARD_PATH), ("GET", OLD_CARD_PATH)]


async def test_agent_card_missing_is_a_404_error(server):
    async with make_client(server) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            await client.connect()
    assert info.value.status == 404
    assert "404" in one_line(info.value)
    assert paths(server) == [("GET", CARD_PATH), ("GET", OLD_CARD_PATH)]


async def test_agent_card_500_does_not_fall_back(server):
    server.route("GET", CARD_PATH, Reply.json({"error": "database down"}, status=500))
    async with make_client(server) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            await client.connect()
    assert info.value.status == 500 and "database down" in one_line(info.value)
    assert paths(server) == [("GET", CARD_PATH)]


async def test_agent_card_not_json(server):
    server.route("GET", CARD_PATH, Reply(body=b"<html>hello</html>", content_type="text/html"))
    async with make_client(server) as client:
        with pytest.raises(MalformedFrame) as info:
            await client.connect()
    assert "hello" in one_line(info.value)


@pytest.mark.parametrize(
    "card, override, expected",
    [
        (kagent_card(), None, Dialect.V03),  # protocolVersion 0.3.0
        (card_10(), None, Dialect.V10),  # supportedInterfaces JSONRPC 1.0
        ({"name": "x", "protocolVersion": "1.0"}, None, Dialect.V10),
        ({"name": "x"}, None, Dialect.V03),  # nothing said: 0.3
        (card_10(), Dialect.V03, Dialect.V03),  # config wins
        (kagent_card(), Dialect.V10, Dialect.V10),
    ],
)
async def test_dialect_from_card_or_config(server, card, override, expected):
    server.route("GET", CARD_PATH, Reply.json(card))
    async with make_client(server, dialect=override) as client:
        assert (await client.connect()).dialect is expected


async def test_rewind_and_fork_from_the_extension(server):
    api = server.url + "/api"
    server.route("GET", CARD_PATH, Reply.json(rewind_card({"rewind": ["a2a", "rest"], "fork": True, "api": api})))
    async with make_client(server) as client:
        caps = await client.connect()
    assert caps.rewind_modes == ("a2a", "rest")
    assert caps.rewind_mode == "a2a"
    assert caps.fork is True
    assert caps.api == api


async def test_extension_without_params_means_rewind_over_a2a_only(server):
    server.route("GET", CARD_PATH, Reply.json(rewind_card(None)))
    async with make_client(server) as client:
        caps = await client.connect()
    assert caps.rewind_modes == ("a2a",)
    assert caps.fork is False


@pytest.mark.parametrize(
    "card, mode, api, modes, fork",
    [
        ("ext", "off", True, (), False),
        ("ext", "rest", True, ("rest",), True),
        ("ext", "a2a", True, ("a2a",), True),
        ("stock", "a2a", False, ("a2a",), False),
        ("stock", "rest", True, ("rest",), False),
        ("stock", "rest", False, (), False),  # REST rewind needs an API
        ("stock", "auto", True, (), False),
    ],
)
async def test_config_rewind_mode(server, card, mode, api, modes, fork):
    body = rewind_card({"rewind": ["a2a", "rest"], "fork": True}) if card == "ext" else kagent_card()
    server.route("GET", CARD_PATH, Reply.json(body))
    async with make_client(server, rewind=mode, api=(server.url + "/api") if api else None) as client:
        caps = await client.connect()
    assert caps.rewind_modes == modes
    assert caps.fork is fork


async def test_stock_kagent_card_rewind_and_fork_raise_unsupported_and_send_nothing(server):
    """The gate is Chat.permissions: a card without our extension means no rewind, no edit, no
    fork, each with the card as the reason, and nothing but the card is ever requested."""
    from rewindtui.chat import Chat

    server.route("GET", CARD_PATH, Reply.capture(load(K + "01_agent_card.txt")))
    server.route("POST", "/", Reply.capture(load(K + "12_rewind_key_ignored_by_stock_server.txt")))
    async with make_client(server, api=server.url + "/api") as client:
        chat = Chat(client)
        await client.connect()
        chat.conversation.session_id = "s1"
        for name in ("02_turn_plain_text", "03_turn_with_tool_call"):
            cap = load(K + name + ".txt")
            chat.conversation.add_user_message(cap.request["params"]["message"])
            for data in cap.data_lines:
                chat.conversation.apply(parse_frame(data))
        before = view(chat.conversation)
        target = chat.conversation.turn_invocations()[0]
        perms = chat.permissions()
        assert not perms.can_rewind and not perms.can_fork
        with pytest.raises(Unsupported) as rewind:
            await chat.rewind(target)
        with pytest.raises(Unsupported) as edit:
            chat.begin_edit(target)
        with pytest.raises(Unsupported) as fork:
            await chat.fork(target)
        assert view(chat.conversation) == before
    for info in (rewind, edit, fork):
        assert "echo_agent does not support" in one_line(info.value)
    assert paths(server) == [("GET", CARD_PATH)]


async def test_forced_a2a_rewind_on_a_stock_server_sends_the_control_message(server):
    """rewind = a2a overrides the card; the stock server then runs an ordinary empty turn."""
    server.route("GET", CARD_PATH, Reply.capture(load(K + "01_agent_card.txt")))
    server.route("POST", "/", Reply.capture(load(K + "12_rewind_key_ignored_by_stock_server.txt")))
    async with make_client(server, rewind="a2a") as client:
        message = client.rewind_message("s1", "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba")
        events = [e async for e in client.stream(message)]
    (sent,) = server.requests_to("POST", "/")
    body = sent.json
    assert body["method"] == "message/stream"
    assert body["params"]["message"] == message
    assert message["metadata"] == {"kagent_rewind_before_invocation_id": "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba"}
    assert message["contextId"] == "s1" and "taskId" not in message
    conv = Conversation("s1")
    for e in events:
        conv.apply(e)
    assert view(conv) == [("message", "user", "", INV_12, ()), ("message", "agent", REPLY_04, INV_12, ())]


async def test_rest_rewind_and_fork(server):
    api = server.url + "/api"
    server.route("GET", CARD_PATH, Reply.json(rewind_card({"rewind": ["rest"], "fork": True, "api": api})))
    server.route(
        "POST", "/api/sessions/s1/rewind", Reply.json({"error": False, "data": {"id": "s1"}, "message": "rewound"})
    )
    server.route(
        "POST", "/api/sessions/s1/fork", Reply.json({"error": False, "data": {"id": "s2", "name": "s1 (fork)"}})
    )
    async with make_client(server, user_id="u1") as client:
        assert await client.rewind_rest("s1", "e-1") == {"id": "s1"}
        session = await client.fork("s1", "e-1")
        # the A2A control message is not offered by this card: rewind goes over REST
        assert client.capabilities is not None and client.capabilities.rewind_mode == "rest"
    assert (session.id, session.name) == ("s2", "s1 (fork)")
    for path in ("/api/sessions/s1/rewind", "/api/sessions/s1/fork"):
        (req,) = server.requests_to("POST", path)
        assert req.json == {"rewind_before_invocation_id": "e-1"}
        assert req.query == {"user_id": ["u1"]}
        assert req.headers["x-user-id"] == "u1"
    assert not server.requests_to("POST", "/")


# -- streaming the captures ---------------------------------------------------------------------
KAGENT_STREAMS = {
    "02_turn_plain_text.txt": (True, TURN_02),
    "03_turn_with_tool_call.txt": (True, TURN_03),
    "04_turn_three.txt": (True, TURN_04),
    "05_turn_streaming_partials.txt": (
        True,
        [
            ("message", "user", "hello", "e-ec328c1f-ff6c-4bc9-8a95-29325259af82", ()),
            ("message", "agent", TURN_02[1][2], "e-ec328c1f-ff6c-4bc9-8a95-29325259af82", ()),
        ],
    ),
    "06_turn_streaming_with_tool.txt": (
        True,
        [(kind, role, text, "e-8327c228-45b1-4147-ae39-48303bce8a80", tools) for kind, role, text, _, tools in TURN_03],
    ),
    "07_failed_no_parts.txt": (
        False,
        [("message", "user", "", None, ()), ("error", "system", "No parts in the new_message.", None, ())],
    ),
    "11_continue_completed_task_error.txt": (
        True,
        [
            ("message", "user", "follow-up same task", None, ()),
            (
                "error",
                "system",
                "JSON-RPC error -32602: Task 36af6b91-36cc-446c-b644-5f9c4e8529ca is in terminal state: completed",
                None,
                (),
            ),
        ],
    ),
    "12_rewind_key_ignored_by_stock_server.txt": (
        False,
        [("message", "user", "", INV_12, ()), ("message", "agent", REPLY_04, INV_12, ())],
    ),
}


@pytest.mark.parametrize("name", sorted(KAGENT_STREAMS))
async def test_stream_kagent_capture_into_a_conversation(server, name):
    cap = load(K + name)
    show_local, expected = KAGENT_STREAMS[name]
    server.route("GET", CARD_PATH, Reply.capture(load(K + "01_agent_card.txt")))
    server.route("POST", "/", Reply.capture(cap))
    message = cap.request["params"]["message"]
    conv = Conversation("s1")
    if show_local:
        conv.add_user_message(message)
    async with make_client(server) as client:
        events = [e async for e in client.stream(message)]
    assert [(e.kind, e.body) for e in events] == [(p.kind, p.body) for p in map(parse_frame, cap.data_lines)]
    for e in events:
        conv.apply(e)
    assert view(conv) == expected
    assert conv.turn_state in ("completed", "failed")
    (sent,) = server.requests_to("POST", "/")
    assert sent.json["jsonrpc"] == "2.0" and sent.json["method"] == "message/stream"
    assert sent.json["params"] == {"message": message}
    assert sent.headers["accept"] == "text/event-stream"
    assert "a2a-version" not in sent.headers


A2A_STREAMS = {
    "a2a-sdk-0.3.26_message_stream.txt": (kagent_card(), "m-1"),
    "a2a-sdk-1.3.0_message_stream_v0.3_compat.txt": (kagent_card(), "m-2"),
    "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt": (card_10(), "m-1"),
}


@pytest.mark.parametrize("name", sorted(A2A_STREAMS))
async def test_stream_a2a_sdk_capture_into_a_conversation(server, name):
    cap = load(A + name)
    card, message_id = A2A_STREAMS[name]
    server.route("GET", CARD_PATH, Reply.json(card))
    server.route("POST", "/", Reply.capture(cap))
    conv = Conversation("s0")
    conv.add_user_message({"messageId": "earlier", "role": "user", "parts": [{"kind": "text", "text": "before"}]})
    conv.end_turn("completed")
    async with make_client(server) as client:
        dialect = (await client.connect()).dialect
        message = client.build_message("hello", session_id=None)
        message["messageId"] = message_id  # the id the capture echoes
        conv.add_user_message(message)
        events = [e async for e in client.stream(message)]
    assert events[0].kind is EventKind.TASK
    for e in events:
        conv.apply(e)
    # the turn-opening Task replaced the local copy of the user message, and kept the earlier turn
    assert view(conv) == [("message", "user", "before", None, ())] + ECHO_TURN
    (sent,) = server.requests_to("POST", "/")
    if dialect is Dialect.V10:
        assert sent.headers["a2a-version"] == "1.0"
        assert sent.json["method"] == "SendStreamingMessage"
        assert sent.json["params"]["message"] == {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    else:
        assert "a2a-version" not in sent.headers
        assert sent.json["method"] == "message/stream"
        assert sent.json["params"]["message"] == {
            "messageId": message_id,
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
            "kind": "message",
        }


async def test_config_dialect_override_changes_what_is_sent(server):
    server.route("GET", CARD_PATH, Reply.capture(load(K + "01_agent_card.txt")))
    server.route("POST", "/", Reply.capture(load(A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")))
    async with make_client(server, dialect=Dialect.V10) as client:
        await client.connect()
        message = client.build_message("hello", session_id="s1")
        events = [e async for e in client.stream(message)]
    assert [e.kind for e in events] == [EventKind.TASK, EventKind.STATUS, EventKind.ARTIFACT, EventKind.STATUS]
    (sent,) = server.requests_to("POST", "/")
    assert sent.headers["a2a-version"] == "1.0"
    assert sent.json["method"] == "SendStreamingMessage"
    assert sent.json["params"]["message"]["role"] == "ROLE_USER"
    assert "kind" not in sent.json["params"]["message"]


async def test_each_message_gets_a_new_id_and_no_task_id_unless_resuming(server):
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    async with make_client(server) as client:
        await client.connect()
        a = client.build_message("x", session_id="s1")
        b = client.build_message("x", session_id="s1")
        resume = client.build_message(None, session_id="s1", task_id="t-wait", data=[{"decision_type": "approve"}])
    assert a["messageId"] != b["messageId"]
    assert a["contextId"] == "s1" and "taskId" not in a and "taskId" not in b
    assert resume["taskId"] == "t-wait"
    assert resume["parts"] == [{"kind": "data", "data": {"decision_type": "approve"}}]


# -- SSE tolerance ------------------------------------------------------------------------------
def _split(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize(
    "newline, comments, ids, chunk",
    [
        ("\r\n", False, False, None),
        ("\n", True, False, None),
        ("\n", False, True, None),
        ("\r\n", True, True, 7),  # tiny chunks: CR and LF land in different chunks
        ("\r", True, True, 5),
    ],
)
async def test_sse_line_endings_comments_and_id_lines(server, newline, comments, ids, chunk):
    cap = load(K + "02_turn_plain_text.txt")
    body = sse_body(cap.data_lines, newline=newline, comments=comments, ids=ids)
    assert (b"\r\n" in body) == (newline == "\r\n") and (b": keep-alive" in body) == comments
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.sse(body, chunks=_split(body, chunk) if chunk else None))
    message = cap.request["params"]["message"]
    conv = Conversation("s1")
    conv.add_user_message(message)
    async with make_client(server) as client:
        events = [e async for e in client.stream(message)]
    assert [(e.kind, e.body) for e in events] == [(p.kind, p.body) for p in map(parse_frame, cap.data_lines)]
    for e in events:
        conv.apply(e)
    assert view(conv) == TURN_02


async def test_sse_multi_line_data_is_joined(server):
    frame = json.loads(load(K + "02_turn_plain_text.txt").data_lines[2])
    pretty = json.dumps(frame, indent=2).splitlines()
    body = ("".join(f"data: {line}\n" for line in pretty) + "\n").encode()
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.sse(body))
    async with make_client(server) as client:
        events = [e async for e in client.stream(client.build_message("x", session_id="s1"))]
    assert len(events) == 1 and events[0].kind is EventKind.STATUS
    assert events[0].body == frame["result"]


async def test_json_rpc_error_frame_with_http_200(server):
    cap = load(K + "11_continue_completed_task_error.txt")
    assert cap.status == 200
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.capture(cap))
    async with make_client(server) as client:
        events = [e async for e in client.stream(cap.request["params"]["message"])]
    (event,) = events
    assert event.kind is EventKind.ERROR
    assert event.body == {
        "code": -32602,
        "message": "Task 36af6b91-36cc-446c-b644-5f9c4e8529ca is in terminal state: completed",
    }


async def test_json_rpc_error_answered_as_plain_json(server):
    """Some servers answer a refused stream request with one JSON body instead of SSE."""
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.capture(load(K + "09_tasks_get_unknown.txt")))
    async with make_client(server) as client:
        events = [e async for e in client.stream(client.build_message("x", session_id="s1"))]
    (event,) = events
    assert event.kind is EventKind.ERROR
    assert event.body == {"code": -32001, "message": "Task not found"}


# -- typed errors -------------------------------------------------------------------------------
async def test_connection_refused():
    port = closed_port()
    async with A2AClient(ServerConfig(url=f"http://127.0.0.1:{port}/")) as client:
        with pytest.raises(ConnectFailed) as info:
            await client.connect()
        with pytest.raises(ConnectFailed):
            async for _ in client.stream({"messageId": "m", "role": "user", "parts": []}):
                pass
    text = one_line(info.value)
    assert text.startswith("cannot connect to ") and f":{port}/" in text


async def test_rest_connection_refused():
    port = closed_port()
    async with A2AClient(ServerConfig(url=f"http://127.0.0.1:{port}/", api=f"http://127.0.0.1:{port}/api")) as client:
        with pytest.raises(ConnectFailed) as info:
            await client.list_sessions()
    assert "cannot connect" in one_line(info.value)


async def test_timeout_is_a_one_line_connect_failed(server):
    hold = threading.Event()
    server.route("GET", CARD_PATH, Reply(body=b"{}", hold=hold))
    http = httpx.AsyncClient(timeout=httpx.Timeout(0.2))
    async with A2AClient(ServerConfig(url=server.url + "/"), http=http) as client:
        with pytest.raises(ConnectFailed) as info:
            await client.connect()
    hold.set()
    assert one_line(info.value).startswith(
        f"timed out waiting for {server.url}/.well-known/agent-card.json after sending"
    )


async def test_config_timeout_applies_to_the_agent_card(server):
    hold = threading.Event()
    server.route("GET", CARD_PATH, Reply(body=b"{}", hold=hold))
    async with A2AClient(ServerConfig(url=server.url + "/", timeout=0.1)) as client:
        try:
            with pytest.raises(ConnectFailed):
                await asyncio.wait_for(client.connect(), 0.6)
        finally:
            hold.set()


async def test_http_500_with_json_body(server):
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route(
        "POST",
        "/",
        Reply.json({"jsonrpc": "2.0", "id": "1", "error": {"code": -32603, "message": "internal boom"}}, status=500),
    )
    async with make_client(server) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            async for _ in client.stream(client.build_message("x", session_id="s1")):
                pass
    assert info.value.status == 500
    text = one_line(info.value)
    assert text.startswith("HTTP 500 Internal Server Error from POST ")
    assert text.endswith(": internal boom")


async def test_http_500_with_html_body_gives_a_short_excerpt(server):
    html = (
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>\n<style>body { color: red }</style>"
        "<script>var x = 1;</script></head>\n<body>\n<h1>Bad   Gateway</h1>\n<p>"
        + "upstream went away " * 100
        + "</p></body></html>"
    )
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply(status=500, body=html.encode(), content_type="text/html"))
    async with make_client(server) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            async for _ in client.stream(client.build_message("x", session_id="s1")):
                pass
    text = one_line(info.value)
    assert "502 Bad Gateway Bad Gateway upstream went away" in text
    assert "<" not in text and "color: red" not in text and "var x" not in text
    assert len(text) < 400 and text.endswith("…")


async def test_malformed_frame_gives_an_excerpt(server):
    body = b'data: {"id":"1","jsonrpc":"2.0","result":{"kind":"status-upd\n\n'
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.sse(body))
    async with make_client(server) as client:
        with pytest.raises(MalformedFrame) as info:
            async for _ in client.stream(client.build_message("x", session_id="s1")):
                pass
    text = one_line(info.value)
    assert text.startswith("malformed stream frame: ")
    assert '"kind":"status-upd' in text


async def test_malformed_frame_after_good_ones_keeps_what_came_before(server):
    lines = load(K + "02_turn_plain_text.txt").data_lines
    body = sse_body(lines[:2]) + b"data: " + b"x" * 5000 + b"\n\n"
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.sse(body))
    got = []
    async with make_client(server) as client:
        with pytest.raises(MalformedFrame) as info:
            async for e in client.stream(client.build_message("x", session_id="s1")):
                got.append(e.kind)
    assert got == [EventKind.STATUS, EventKind.STATUS]
    assert len(one_line(info.value)) < 300


def test_parse_frame_malformed_is_typed():
    with pytest.raises(MalformedFrame):
        parse_frame("not json")
    with pytest.raises(ClientError):
        parse_frame("")


# -- kagent-style REST --------------------------------------------------------------------------
def rest_client(server: FakeServer, **kw) -> A2AClient:
    return make_client(server, api=server.url + "/api", user_id="u1", headers={"Authorization": "Bearer t0k3n"}, **kw)


async def test_sessions_list_create_get(server):
    s1 = {
        "id": "s1",
        "name": "first",
        "user_id": "u1",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-02T00:00:00Z",
    }
    server.route(
        "GET",
        "/api/sessions",
        Reply.json({"error": False, "data": [s1, {"id": "s2"}], "message": "Successfully listed sessions"}),
    )
    server.route(
        "POST",
        "/api/sessions",
        Reply.json({"error": False, "data": {"id": "s3", "name": "new one"}, "message": "created"}, status=201),
    )
    server.route("GET", "/api/sessions/s1", Reply.json({"error": False, "data": s1}))
    async with rest_client(server) as client:
        sessions = await client.list_sessions()
        created = await client.create_session(name="new one")
        got = await client.get_session("s1")
    assert [(s.id, s.name, s.user_id) for s in sessions] == [("s1", "first", "u1"), ("s2", "", None)]
    assert (sessions[0].created_at, sessions[0].updated_at) == ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
    assert (created.id, created.name) == ("s3", "new one")
    assert got.raw == s1
    (post,) = server.requests_to("POST", "/api/sessions")
    assert post.json == {"name": "new one"}
    for req in server.requests:
        assert req.headers["x-user-id"] == "u1"
        assert req.query["user_id"] == ["u1"]
        assert req.headers["authorization"] == "Bearer t0k3n"
    # no agent card was needed for REST
    assert ("GET", CARD_PATH) not in paths(server)


async def test_session_tasks_load_into_a_transcript(server):
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    t10 = load(K + "10_message_send_nonstream.txt").json_body["result"]
    server.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": [t08, t10], "message": "ok"}))
    async with rest_client(server) as client:
        tasks = await client.session_tasks("s1")
        await client.session_tasks("s1", include_rewound=True)
    assert tasks == [t08, t10]
    assert view(extract_messages_from_tasks(tasks)) == TURN_03 + [
        ("message", "user", "non streaming hello", INV_10, ()),
        ("message", "agent", REPLY_10, INV_10, ()),
    ]
    first, second = server.requests_to("GET", "/api/sessions/s1/tasks")
    assert first.query == {"user_id": ["u1"]}
    assert second.query == {"user_id": ["u1"], "include_rewound": ["true"]}


async def test_a_server_that_does_not_page_session_tasks_answers_them_all_in_one_page(server):
    # kagent's controller (HandleListTasksForSession) knows no limit/before: every task, no token
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    t10 = load(K + "10_message_send_nonstream.txt").json_body["result"]
    server.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": [t08, t10], "message": "ok"}))
    async with rest_client(server) as client:
        page = await client.session_tasks_page("s1", 250)
    assert page.tasks == [t08, t10] and page.next_page_token is None
    [request] = server.requests_to("GET", "/api/sessions/s1/tasks")
    assert request.query == {"user_id": ["u1"], "limit": ["250"]}


async def test_a_paging_server_gives_the_token_of_the_older_page(server):
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    body = {"error": False, "data": [t08], "message": "ok", "next_page_token": "tok-1"}
    server.route("GET", "/api/sessions/s1/tasks", Reply.json(body))
    async with rest_client(server) as client:
        page = await client.session_tasks_page("s1", 1, "tok-0")
    assert page.tasks == [t08] and page.next_page_token == "tok-1"
    [request] = server.requests_to("GET", "/api/sessions/s1/tasks")
    assert request.query == {"user_id": ["u1"], "limit": ["1"], "before": ["tok-0"]}


async def test_extra_headers_go_on_card_stream_and_rest(server):
    cap = load(K + "02_turn_plain_text.txt")
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    server.route("POST", "/", Reply.capture(cap))
    server.route("GET", "/api/sessions", Reply.json({"error": False, "data": []}))
    async with rest_client(server) as client:
        [e async for e in client.stream(cap.request["params"]["message"])]
        assert await client.list_sessions() == []
    assert paths(server) == [("GET", CARD_PATH), ("POST", "/"), ("GET", "/api/sessions")]
    for req in server.requests:
        assert req.headers["authorization"] == "Bearer t0k3n"
        assert req.headers["x-user-id"] == "u1"


@pytest.mark.parametrize(
    "reply, status, words",
    [
        (Reply.json({"error": "session not found"}, status=404), 404, "session not found"),
        (Reply.json({"error": "user_id is required"}, status=400), 400, "user_id is required"),
        (Reply.json({"error": "quota exceeded"}, status=200), 200, "quota exceeded"),  # error in a 200 envelope
        (
            Reply(
                status=500, body=b"<html><body><h1>Internal Server Error</h1></body></html>", content_type="text/html"
            ),
            500,
            "Internal Server Error",
        ),
    ],
)
async def test_rest_errors_are_one_line(server, reply, status, words):
    server.route("GET", "/api/sessions/s9", reply)
    async with rest_client(server) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            await client.get_session("s9")
    assert info.value.status == status
    text = one_line(info.value)
    assert words in text and "<" not in text


async def test_rest_bad_bodies_are_malformed(server):
    server.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": {"not": "a list"}}))
    server.route("GET", "/api/sessions/s1", Reply(body=b"definitely not json"))
    server.route("GET", "/api/sessions", Reply.json({"error": False, "data": [{"name": "no id"}]}))
    async with rest_client(server) as client:
        with pytest.raises(MalformedFrame):
            await client.session_tasks("s1")
        with pytest.raises(MalformedFrame) as info:
            await client.get_session("s1")
        with pytest.raises(MalformedFrame):
            await client.list_sessions()
    assert "definitely not json" in one_line(info.value)


async def test_rest_without_an_api_is_unsupported_and_sends_nothing(server):
    server.route("GET", CARD_PATH, Reply.json(kagent_card()))
    async with make_client(server) as client:
        assert not client.has_api
        with pytest.raises(Unsupported) as info:
            await client.list_sessions()
    one_line(info.value)
    assert paths(server) == [("GET", CARD_PATH)]  # the card, which names no REST base, and nothing else
