"""Sending a turn through broken networks and broken servers (a fault proxy in front of the real
embedded server). Each case asserts a clear error, nothing stored lost, and the view equal to what
the server holds afterwards."""

from __future__ import annotations

import json

import pytest
from faultkit import view
from proxy import Fault, FaultProxy, is_rest, is_rpc, is_turn

from rewindtui.chat import Chat, TurnInterrupted, TurnRefused, freshness
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import ConnectFailed
from rewindtui.model import INTERRUPTED, ItemKind

SUBSCRIBE = ("SubscribeToTask", "tasks/resubscribe")
NOT_OFFERED = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "not supported"}}).encode()


@pytest.fixture
def no_resubscribe(proxy: FaultProxy) -> None:
    """The server cannot resume a stream: the client must re-read the turn instead."""
    proxy.add(Fault(is_rpc(*SUBSCRIBE), times=100, status=200, body=NOT_OFFERED))


async def seeded(make_chat, *texts: str) -> str:
    """A session with one finished turn per text, made directly (no faults)."""
    chat = await make_chat(direct=True)
    await chat.open(None)
    for text in texts:
        await chat.send(text)
    assert chat.session_id is not None
    return chat.session_id


def errors(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.kind is ItemKind.ERROR]


# -- a stream cut or unfinished is never a finished answer --------------------------------------
@pytest.mark.parametrize("how", ["eof", "chunked", "reset"])
async def test_cut_stream_is_interrupted_and_the_view_is_the_servers(make_chat, proxy, truth, no_resubscribe, how):
    sid = await seeded(make_chat, "first")
    proxy.add(Fault(is_turn, cut_after=2, how=how))
    chat = await make_chat()
    await chat.open(sid)
    with pytest.raises(TurnInterrupted) as info:
        await chat.send("second")
    # the server finished the turn (the proxy waited for it): re-read, it shows as the server has it
    assert info.value.server_state == "completed"
    assert "interrupted" in str(info.value) and "\n" not in str(info.value)
    assert chat.conversation.turn_state == "completed"
    assert view(chat.conversation) == await truth(sid)
    assert [t for _, r, t, _ in view(chat.conversation) if r == "user"] == ["first", "second"]
    assert errors(chat) and errors(chat)[-1].startswith("Interrupted: ")


async def test_stream_without_a_final_status_is_not_completed(make_chat, proxy, truth, no_resubscribe):
    sid = await seeded(make_chat, "first")
    proxy.add(Fault(is_turn, frames=lambda frames: frames[:-1]))  # all but the final status
    chat = await make_chat()
    await chat.open(sid)
    states: list[str] = []
    chat.listener = lambda change: states.append(chat.conversation.turn_state)
    with pytest.raises(TurnInterrupted, match="the stream ended before the turn finished"):
        await chat.send("second")
    # the stream never made it "completed"; only the re-read (the server's word) did
    assert states.index("completed") > states.index("working")
    assert all(s != "completed" for s in states[: states.index("completed")])
    assert view(chat.conversation) == await truth(sid)


async def test_cut_while_the_server_still_runs_the_turn(make_chat, slow_server, truth):
    """Cut while the turn is still running on the server: the turn is marked interrupted (not
    completed, not failed); resume() then follows it to its end, and the view is the server's."""
    from proxy import FaultProxy as Proxy

    with Proxy(slow_server.base_url) as slow_proxy:
        slow_proxy.add(Fault(is_rpc(*SUBSCRIBE), times=10, status=200, body=NOT_OFFERED))
        slow_proxy.add(Fault(is_turn, live=True, cut_after=3, how="chunked"))
        from rewindtui.client.a2a_client import A2AClient, ServerConfig

        config = ServerConfig(
            url=slow_proxy.rewrite(slow_server.agent_url), api=slow_proxy.rewrite(slow_server.api_url)
        )
        async with A2AClient(config) as client:
            chat = Chat(client)
            await chat.open(None)
            with pytest.raises(TurnInterrupted) as info:
                await chat.send("a slow one")
            assert info.value.server_state == "working"
            assert chat.conversation.turn_state == INTERRUPTED
            assert "still running on the server" in str(info.value)
            assert chat.interrupted_task_id is not None
            await chat.resume(poll_interval=0.05)
            assert chat.conversation.turn_state == "completed"
            assert chat.session_id
            assert view(chat.conversation) == await truth(chat.session_id, srv=slow_server)


async def test_error_frame_then_more_frames_does_not_end_completed(make_chat, proxy, truth, no_resubscribe):
    sid = await seeded(make_chat, "first")
    error = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "upstream hiccup"}}).encode()
    proxy.add(Fault(is_turn, frames=lambda frames: frames[:2] + [error] + frames[2:]))
    chat = await make_chat()
    await chat.open(sid)
    states: list[str] = []
    chat.listener = lambda change: states.append(chat.conversation.turn_state)
    with pytest.raises(TurnInterrupted) as info:
        await chat.send("second")
    assert "upstream hiccup" in str(info.value)
    # the frames after the error were not believed: the stream never made the turn "completed" ...
    streamed = states[: states.index("idle")]  # "idle": the re-read of the server's tasks begins
    assert streamed and "completed" not in streamed
    # ... the server's own record, re-read, did
    assert info.value.server_state == chat.conversation.turn_state == "completed"
    assert view(chat.conversation) == await truth(sid)


async def test_malformed_half_and_non_utf8_frames(make_chat, proxy, truth, no_resubscribe):
    sid = await seeded(make_chat, "first")
    # a half frame (cut JSON) in the middle: the stream cannot be believed past it
    proxy.add(Fault(is_turn, frames=lambda frames: frames[:2] + [frames[2][: len(frames[2]) // 2]] + frames[3:]))
    chat = await make_chat()
    await chat.open(sid)
    with pytest.raises(TurnInterrupted) as info:
        await chat.send("second")
    assert "malformed stream frame" in str(info.value)
    assert view(chat.conversation) == await truth(sid)

    # bytes that are not UTF-8 inside a text: shown as U+FFFD, the turn goes on
    def garble(frames: list[bytes]) -> list[bytes]:
        return [f.replace(b"You said", b"You \xff\xfe said") for f in frames]

    proxy.add(Fault(is_turn, frames=garble))
    await chat.send("third")
    assert chat.conversation.turn_state == "completed"
    assert any("You \ufffd\ufffd said: third" in t for _, _, t, _ in view(chat.conversation))


async def test_unknown_event_kinds_are_shown_not_dropped(make_chat, proxy, truth):
    sid = await seeded(make_chat, "first")
    odd = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"kind": "telemetry", "cpu": 0.5}}).encode()
    proxy.add(Fault(is_turn, frames=lambda frames: frames[:1] + [odd] + frames[1:]))
    chat = await make_chat()
    await chat.open(sid)
    await chat.send("second")
    assert chat.conversation.turn_state == "completed"
    unknown = [i for i in chat.conversation.items if i.kind is ItemKind.UNKNOWN]
    assert len(unknown) == 1 and '"telemetry"' in unknown[0].text
    assert view(chat.conversation) == await truth(sid)


async def test_failed_status_without_ids_after_acceptance_is_a_failed_turn(make_chat, proxy):
    """kagent's failure shape: a final failed status whose message has no ids. The server took the
    message, so it is a failed turn (shown, reason given), not a refusal."""
    sid = await seeded(make_chat, "first")
    failed = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "kind": "status-update",
            "final": True,
            "status": {
                "state": "failed",
                "message": {
                    "kind": "message",
                    "messageId": "x",
                    "role": "agent",
                    "parts": [{"kind": "text", "text": "model quota exceeded"}],
                },
            },
        },
    }

    def fail(frames: list[bytes]) -> list[bytes]:
        task_id = json.loads(frames[0])["result"].get("taskId")
        failed["result"]["taskId"] = task_id
        return frames[:2] + [json.dumps(failed).encode()]

    proxy.add(Fault(is_turn, frames=fail))
    chat = await make_chat()
    await chat.open(sid)
    await chat.send("second")
    assert chat.conversation.turn_state == "failed"
    assert errors(chat) == ["model quota exceeded"]


# -- refused sends leave no trace ---------------------------------------------------------------
@pytest.mark.parametrize(
    "status, body, content_type, words",
    [
        (500, b'{"error": "database is locked"}', "application/json", "database is locked"),
        (
            502,
            b"<html><head><style>p{}</style></head><body><h1>502 Bad Gateway</h1></body></html>",
            "text/html",
            "502 Bad Gateway",
        ),
        (400, b'{"error": true, "message": "agent_ref is required"}', "application/json", "HTTP 400"),
        (401, b"", "text/plain", "HTTP 401"),
    ],
)
async def test_http_errors_refuse_the_send(make_chat, proxy, truth, server, status, body, content_type, words):
    sid = await seeded(make_chat, "first")
    proxy.add(Fault(is_turn, status=status, body=body, content_type=content_type))
    chat = await make_chat()
    await chat.open(sid)
    before = view(chat.conversation)
    with pytest.raises(TurnRefused) as info:
        await chat.send("never shown")
    text = str(info.value)
    assert words in text and "<" not in text and "\n" not in text
    assert view(chat.conversation) == before == await truth(sid)
    assert chat.conversation.turn_state == "idle"


async def test_json_rpc_error_first_refuses_the_send(make_chat, proxy, truth):
    sid = await seeded(make_chat, "first")
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Task x is in terminal state"}}
    ).encode()
    proxy.add(Fault(is_turn, status=200, body=body))
    chat = await make_chat()
    await chat.open(sid)
    before = view(chat.conversation)
    with pytest.raises(TurnRefused, match="terminal state"):
        await chat.send("never shown")
    assert view(chat.conversation) == before == await truth(sid)


async def test_refused_by_a_turn_running_elsewhere(tmp_path_factory, make_chat, monkeypatch):
    """Another client's turn is running on the session: the server refuses with a failed status
    (not an HTTP error) before taking the message. Nothing shows; the draft is the caller's."""
    from rewindtui.client.a2a_client import A2AClient, ServerConfig
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(tmp_path_factory.mktemp("slow"), demo_delay=0.3) as slow:
        async with (
            A2AClient(ServerConfig(url=slow.agent_url, api=slow.api_url)) as a,
            A2AClient(ServerConfig(url=slow.agent_url, api=slow.api_url)) as b,
        ):
            first = Chat(a)
            await first.open(None)
            await first.send("hello")
            sid = first.session_id
            assert sid
            second = Chat(b)
            await second.open(sid)
            assert b.capabilities is not None
            monkeypatch.setattr(
                freshness, "ensure_fresh", no_check
            )  # the server's own refusal (the client's check: freshness)
            before = [(i.role, i.text) for i in second.conversation.items]
            import asyncio

            running = asyncio.ensure_future(first.send("a long one"))
            while not first.conversation.busy:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            with pytest.raises(TurnRefused, match="is running on session"):
                await second.send("me too")
            assert [(i.role, i.text) for i in second.conversation.items] == before
            await running
            await second.refresh()
            assert [t for r, t in ((i.role, i.text) for i in second.conversation.items) if r == "user"] == [
                "hello",
                "a long one",
            ]


async def test_connection_reset_after_the_server_took_the_message(make_chat, proxy, truth, no_resubscribe):
    """Reset with no byte of answer: was it taken? The server's history says yes: interrupted."""
    sid = await seeded(make_chat, "first")
    proxy.add(Fault(is_turn, reset=True))
    chat = await make_chat()
    await chat.open(sid)
    with pytest.raises(TurnInterrupted):
        await chat.send("second")
    assert view(chat.conversation) == await truth(sid)
    assert [t for _, r, t, _ in view(chat.conversation) if r == "user"] == ["first", "second"]


async def test_connection_reset_before_the_server_got_it_is_a_refusal(make_chat, proxy, truth):
    sid = await seeded(make_chat, "first")
    proxy.add(Fault(is_turn, status=200, reset=True))  # not forwarded, then reset
    chat = await make_chat()
    await chat.open(sid)
    before = view(chat.conversation)
    with pytest.raises(TurnRefused, match="the server does not have the message"):
        await chat.send("lost on the way")
    assert view(chat.conversation) == before == await truth(sid)


async def test_server_down_at_start(make_chat):
    from fakeserver import closed_port
    from rewindtui.client.a2a_client import A2AClient, ServerConfig

    async with A2AClient(ServerConfig(url=f"http://127.0.0.1:{closed_port()}/api/a2a/x/y/")) as client:
        chat = Chat(client)
        with pytest.raises(ConnectFailed, match="cannot connect"):
            await chat.connect_and_open()
        assert chat.conversation.items == [] and chat.session_id is None


async def test_one_megabyte_message(make_chat, truth):
    chat = await make_chat()
    await chat.open(None)
    text = ("0123456789abcdef" * 65536)[:1_000_000]
    await chat.send(text)
    assert chat.conversation.turn_state == "completed"
    assert chat.session_id
    shown = view(chat.conversation)
    assert shown == await truth(chat.session_id)
    assert shown[0][2] == text and text in shown[1][2]


# -- the headless command's exit status and output ---------------------------------------------
def test_headless_send_exits_non_zero_on_a_cut_stream(server, proxy, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("REWINDTUI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    proxy.add(Fault(is_rpc(*SUBSCRIBE), times=10, status=200, body=NOT_OFFERED))
    proxy.add(Fault(is_turn, cut_after=2, how="chunked"))
    args = ["send", "--url", proxy.rewrite(server.agent_url), "--api", proxy.rewrite(server.api_url), "cut me"]
    rc = cli.main(args)
    out, err = capsys.readouterr()
    assert rc == 1
    assert out.startswith("session: ") and "user: cut me" in out
    assert err.count("\n") == 1 and err.startswith("rewindtui: error: the turn was interrupted")


def test_headless_output_neutralises_escapes_and_markup(server, proxy, capsys, monkeypatch, tmp_path):
    """A reply full of terminal escapes and Rich markup: the text output shows it literally and
    safely; the JSON output keeps it exact (escaped by JSON)."""
    monkeypatch.setenv("REWINDTUI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    nasty = "\x1b]0;pwned\x07\x1b[2J[bold red]alarm[/] \x1b]52;c;Y2xpcA==\x07\x9b31m"

    def inject(frames: list[bytes]) -> list[bytes]:
        return [f.replace(b"You said", json.dumps(nasty)[1:-1].encode() + b" You said") for f in frames]

    url = ["--url", proxy.rewrite(server.agent_url), "--api", proxy.rewrite(server.api_url)]
    proxy.add(Fault(is_turn, frames=inject))
    assert cli.main(["send", *url, "hi"]) == 0
    out, _ = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "[bold red]alarm[/]" in out  # markup shown as written
    proxy.add(Fault(is_turn, frames=inject))
    assert cli.main(["send", "--json", *url, "hi"]) == 0
    out, _ = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert any(nasty in r.get("text", "") for r in records)
    assert "\x1b" not in out and "\x9b" not in out


def test_headless_history_with_an_html_500(server, proxy, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("REWINDTUI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    proxy.add(
        Fault(
            is_rest("GET", "/api/sessions"),
            status=500,
            body=b"<html><body><h1>Internal Server Error</h1></body></html>",
            content_type="text/html",
        )
    )
    rc = cli.main(
        [
            "history",
            "--session",
            "abc",
            "--url",
            proxy.rewrite(server.agent_url),
            "--api",
            proxy.rewrite(server.api_url),
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert err.startswith("rewindtui: error: HTTP 500") and "Internal Server Error" in err and "<" not in err


async def no_check(chat, error) -> None:
    """The client's freshness check, off: what the server itself refuses (client/freshness.py)."""
