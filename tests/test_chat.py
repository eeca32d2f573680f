"""Chat against a loopback HTTP server replaying canned answers (tests/fakeserver.py), asserting
both what the view shows and exactly what was sent: resuming input-required tasks, confirmations,
the rewind answer with and without the contract's flag, the capability gate, lazy sessions, and
session id prefixes."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from captures import load
from fakeserver import FakeServer, Reply, sse_body
from rewindtui.a2a import contract
from rewindtui.chat import Busy, Chat, RewindOutcomeUnknown, SessionNotFound, TurnInterrupted, TurnRefused
from rewindtui.client.a2a_client import REWIND_EXTENSION, A2AClient, ServerConfig, Unsupported

CARD = "/.well-known/agent-card.json"


@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


def card(*, extension: dict | None = None, streaming: bool = True) -> dict:
    caps: dict = {"streaming": streaming}
    if extension is not None:
        caps["extensions"] = [{"uri": REWIND_EXTENSION, "params": extension}]
    return {"name": "helper", "protocolVersion": "0.3.0", "capabilities": caps}


def msg(
    mid: str, role: str, text: str, *, task: str | None = None, inv: str | None = None, parts: list | None = None
) -> dict:
    m: dict = {"kind": "message", "messageId": mid, "role": role, "parts": parts or [{"kind": "text", "text": text}]}
    if task:
        m["taskId"] = task
    if inv:
        m["metadata"] = {"kagent_invocation_id": inv}
    return m


def status(task: str, state: str, message: dict | None = None, *, final: bool = False, ctx: str = "s1") -> str:
    body: dict = {"kind": "status-update", "taskId": task, "contextId": ctx, "status": {"state": state}, "final": final}
    if message is not None:
        body["status"]["message"] = message
    if state == "working":
        body["metadata"] = {"kagent_invocation_id": f"e-{task}"}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": body})


def turn(task: str, user: dict, answer: str, end: str = "completed") -> bytes:
    """kagent's order: submitted echo, working, the agent's message, the end."""
    return sse_body(
        [
            status(task, "submitted", user),
            status(task, "working"),
            status(task, "working", msg(f"a-{task}", "agent", answer, task=task, inv=f"e-{task}")),
            status(task, end, final=True),
        ]
    )


async def connected(server: FakeServer, **config) -> Chat:
    client = A2AClient(ServerConfig(url=server.url + "/", **config))
    await client.connect()
    return Chat(client)


def sent_messages(server: FakeServer) -> list[dict]:
    return [
        r.json["params"]["message"] for r in server.requests_to("POST", "/") if r.json.get("method") == "message/stream"
    ]


# -- input-required: the next send resumes the waiting task ---------------------------------------
async def test_send_after_input_required_resumes_that_task(server):
    server.route("GET", CARD, Reply.json(card()))
    chat = await connected(server)
    await chat.open(None)
    server.route("POST", "/", Reply.sse(b""))  # replaced below, once the message id is known
    # turn 1 ends waiting for input; turn 2 is the answer; turn 3 a new task
    first = chat.client.build_message("deploy it", session_id="s1")
    replies = [
        turn("t-wait", first, "Sure? (yes/no)", end="input-required"),
        turn(
            "t-wait",
            {"kind": "message", "messageId": "x1", "role": "user", "parts": [{"kind": "text", "text": "yes"}]},
            "done",
        ),
        turn(
            "t-next",
            {"kind": "message", "messageId": "x2", "role": "user", "parts": [{"kind": "text", "text": "thanks"}]},
            "welcome",
        ),
    ]
    server.route("POST", "/", *[Reply.sse(r) for r in replies])
    await chat.send("deploy it")
    assert chat.conversation.turn_state == "input-required"
    await chat.send("yes")
    await chat.send("thanks")
    messages = sent_messages(server)
    assert "taskId" not in messages[0]
    assert messages[1]["taskId"] == "t-wait"  # the answer goes to the waiting task
    assert "taskId" not in messages[2]  # a finished task is never sent to again
    assert {m["contextId"] for m in messages} == {chat.session_id}


async def test_opening_a_session_that_waits_for_input_resumes_it(server):
    api = server.url + "/api"
    server.route("GET", CARD, Reply.json(card()))
    server.route("GET", "/api/sessions", Reply.json({"error": False, "data": [{"id": "s1", "name": "deploy"}]}))
    # kagent's answer shape: {"session": ..., "events": [...]}
    server.route(
        "GET",
        "/api/sessions/s1",
        Reply.json({"error": False, "data": {"session": {"id": "s1", "name": "deploy"}, "events": []}}),
    )
    waiting = {
        "id": "t-wait",
        "contextId": "s1",
        "status": {"state": "input-required"},
        "history": [msg("u1", "user", "deploy it"), msg("a1", "agent", "Sure?")],
    }
    server.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": [waiting]}))
    server.route("POST", "/", Reply.sse(turn("t-wait", msg("x", "user", "yes"), "done")))
    chat = await connected(server, api=api)
    await chat.open("s1")
    assert chat.session is not None and chat.session.name == "deploy"
    assert chat.conversation.turn_state == "input-required"
    await chat.send("yes")
    (message,) = sent_messages(server)
    assert message["taskId"] == "t-wait" and message["contextId"] == "s1"


async def test_confirm_answers_the_approval_question(server):
    """kagent's human-in-the-loop: an ``adk_request_confirmation`` call, the turn input-required;
    confirm() sends the same taskId with the decision data part."""
    server.route("GET", CARD, Reply.json(card()))
    chat = await connected(server)
    await chat.open(None)
    call = {
        "kind": "data",
        "data": {
            "name": "adk_request_confirmation",
            "id": "c1",
            "args": {
                "originalFunctionCall": {"name": "delete_pod", "args": {"pod": "web-1"}, "id": "f1"},
                "toolConfirmation": {"hint": "Delete web-1?"},
            },
        },
        "metadata": {"kagent_type": "function_call"},
    }
    question = msg("q1", "agent", "", task="t-ask", inv="e-t-ask", parts=[call])
    asking = sse_body(
        [
            status("t-ask", "submitted", msg("u", "user", "clean up")),
            status("t-ask", "working", question),
            status("t-ask", "input-required", final=True),
        ]
    )
    server.route("POST", "/", Reply.sse(asking), Reply.sse(turn("t-ask", msg("x", "user", "Approved"), "deleted")))
    assert not chat.permissions().can_confirm
    await chat.send("clean up")
    pending = chat.pending_confirmation()
    assert pending is not None
    assert (pending.tool, pending.args, pending.hint, pending.task_id) == (
        "delete_pod",
        {"pod": "web-1"},
        "Delete web-1?",
        "t-ask",
    )
    assert chat.permissions().can_confirm
    await chat.confirm(True)
    message = sent_messages(server)[-1]
    assert message["taskId"] == "t-ask"
    assert message["parts"][0] == {"kind": "data", "data": {"decision_type": "approve"}}
    assert chat.conversation.turn_state == "completed" and chat.pending_confirmation() is None
    with pytest.raises(Unsupported, match="no question"):
        await chat.confirm(False)


# -- the rewind answer: the contract's flag, and servers that do not set it -----------------------
def seeded(chat: Chat) -> None:
    chat.conversation.session_id = "s1"
    tasks = [
        {"id": "t1", "history": [msg("u1", "user", "one", inv="e-1"), msg("a1", "agent", "r1", inv="e-1")]},
        {"id": "t2", "history": [msg("u2", "user", "two", inv="e-2"), msg("a2", "agent", "r2", inv="e-2")]},
    ]
    chat.conversation.load_tasks(tasks)


def rewind_answer(flag: bool | None, history: list) -> bytes:
    task: dict = {"kind": "task", "id": "t-rw", "contextId": "s1", "status": {"state": "completed"}, "history": history}
    if flag is not None:
        task["metadata"] = {contract.EFFECTIVE_HISTORY_KEY: flag}
    return sse_body([json.dumps({"jsonrpc": "2.0", "id": 1, "result": task})])


async def test_rewind_answer_from_a_server_that_does_not_set_our_flag(server):
    """A server whose card does not advertise our extension (rewind forced to a2a by config):
    its completed Task with a history is the rewind answer."""
    server.route("GET", CARD, Reply.json(card()))
    server.route(
        "POST",
        "/",
        Reply.sse(rewind_answer(None, [msg("u1", "user", "one", inv="e-1"), msg("a1", "agent", "r1", inv="e-1")])),
    )
    chat = await connected(server, rewind="a2a")
    seeded(chat)
    await chat.rewind("e-2")
    assert [i.text for i in chat.conversation.items] == ["one", "r1"]
    assert chat.last_rewind_answer == "fallback"
    (message,) = sent_messages(server)
    assert message["metadata"] == {contract.REWIND_METADATA_KEY: "e-2"} and message["contextId"] == "s1"


async def test_rewind_answer_without_the_flag_the_card_promises_is_a_drift(server):
    """A server advertising our extension must flag its answer; an unflagged one is a contract
    drift: said as such, not silently taken (and the view re-read, here impossible: rolled back)."""
    server.route("GET", CARD, Reply.json(card(extension={"rewind": ["a2a"]})))
    server.route("POST", "/", Reply.sse(rewind_answer(None, [msg("u1", "user", "one", inv="e-1")])))
    chat = await connected(server)
    seeded(chat)
    with pytest.raises(RewindOutcomeUnknown, match="drift"):
        await chat.rewind("e-2")
    assert [i.text for i in chat.conversation.items] == ["one", "r1", "two", "r2"]
    assert chat.last_rewind_answer is None


async def test_flagged_rewind_answer_is_taken(server):
    server.route("GET", CARD, Reply.json(card(extension={"rewind": ["a2a"]})))
    server.route("POST", "/", Reply.sse(rewind_answer(True, [msg("u1", "user", "one", inv="e-1")])))
    chat = await connected(server)
    seeded(chat)
    await chat.rewind("e-2")
    assert [i.text for i in chat.conversation.items] == ["one"]
    assert chat.last_rewind_answer == "flag"


async def test_an_empty_history_task_is_never_the_rewind_answer(server):
    server.route("GET", CARD, Reply.json(card()))
    server.route("POST", "/", Reply.sse(rewind_answer(None, [])))
    chat = await connected(server, rewind="a2a")
    seeded(chat)
    with pytest.raises(RewindOutcomeUnknown):
        await chat.rewind("e-2")
    assert [i.text for i in chat.conversation.items] == ["one", "r1", "two", "r2"]  # not wiped


# -- the capability gate --------------------------------------------------------------------------
async def test_permissions_say_why(server):
    server.route(
        "GET", CARD, Reply.json(card(extension={"rewind": ["a2a", "rest"], "fork": True, "api": server.url + "/api"}))
    )
    chat = await connected(server, rewind="off")
    seeded(chat)
    perms = chat.permissions()
    assert not perms.can_rewind and not perms.can_fork
    assert perms.rewind_reason == "rewind is off for this server in your settings"
    assert "off for this server in your settings" in perms.fork_reason
    assert not perms.can_stop and perms.stop_reason == "no turn is running"
    with pytest.raises(Unsupported, match="rewind is off"):
        await chat.rewind("e-2")

    on = await connected(server)
    seeded(on)
    assert on.permissions().can_rewind and on.permissions().can_fork
    on.sending = True
    perms = on.permissions()
    assert not perms.can_rewind and perms.rewind_reason == "wait for the current turn to finish" and perms.can_stop
    with pytest.raises(Busy):
        await on.rewind("e-2")
    on.sending = False
    # messages without invocation ids: nothing to rewind to, and the reason says so
    on.conversation.load_tasks([{"id": "t", "history": [msg("u", "user", "hi"), msg("a", "agent", "hello")]}])
    assert not on.permissions().can_rewind
    assert "no invocation ids" in on.permissions().rewind_reason
    assert server.requests_to("POST", "/") == []


async def test_kagent_agent_without_the_add_on_says_how_to_fix_it(server):
    server.route("GET", CARD, Reply.json(card()))
    chat = await connected(server, agent_ref="kagent/k8s-agent")
    reason = chat.permissions().rewind_reason
    assert "kagent agent (kagent/k8s-agent) does not support rewind" in reason and "add-on" in reason


# -- lazy sessions --------------------------------------------------------------------------------
async def test_a_new_session_is_created_by_its_first_message_only(server):
    server.route("GET", CARD, Reply.json(card()))
    chat = await connected(server)
    await chat.open(None)
    assert chat.session_id is None and [r.path for r in server.requests] == [CARD]
    server.route("POST", "/", Reply.json({"error": "boom"}, status=500))
    with pytest.raises(TurnRefused):
        await chat.send("hello")
    assert chat.session_id is None and chat.conversation.items == []  # nothing left behind


async def test_on_kagent_the_session_is_created_with_agent_ref_and_dropped_if_the_send_fails(server):
    api = server.url + "/api"
    server.route("GET", CARD, Reply.json(card()))
    server.route(
        "POST",
        "/api/sessions",
        Reply.json({"error": False, "data": {"id": "k1", "user_id": "u"}, "message": "ok"}, status=201),
    )
    server.route(
        "DELETE",
        "/api/sessions/k1",
        Reply.json({"error": False, "data": {}, "message": "Session deleted successfully"}),
    )
    server.route("POST", "/", Reply(status=404, body=b"Agent sandboxes/ns/a not found\n", content_type="text/plain"))
    chat = await connected(server, api=api, agent_ref="ns/a", user_id="u")
    await chat.open(None)
    with pytest.raises(TurnRefused, match="Agent sandboxes/ns/a not found"):
        await chat.send("hello there")
    (create,) = server.requests_to("POST", "/api/sessions")
    assert create.json == {"agent_ref": "ns/a", "name": "hello there"}
    assert create.query == {"user_id": ["u"]} and create.headers["x-user-id"] == "u"
    assert len(server.requests_to("DELETE", "/api/sessions/k1")) == 1
    assert chat.session_id is None


# -- session ids: any unique prefix ---------------------------------------------------------------
async def test_session_id_prefixes(server):
    api = server.url + "/api"
    server.route("GET", CARD, Reply.json(card()))
    listing = [{"id": "0f3a-1111"}, {"id": "0f3a-2222"}, {"id": "9bc0-3333"}]
    server.route("GET", "/api/sessions", Reply.json({"error": False, "data": listing}))
    server.route("GET", "/api/sessions/9bc0-3333", Reply.json({"error": False, "data": {"id": "9bc0-3333"}}))
    server.route(
        "GET", "/api/sessions/9bc0-3333/tasks", Reply.json({"error": False, "message": "no tasks: data omitted"})
    )
    server.route("GET", "/api/sessions/nope", Reply.json({"error": "Session not found: no rows"}, status=404))
    chat = await connected(server, api=api)
    await chat.open("9b")
    assert chat.session_id == "9bc0-3333" and chat.conversation.items == []
    with pytest.raises(SessionNotFound, match="ambiguous: it starts 2 sessions"):
        await chat.open("0f3a")
    with pytest.raises(SessionNotFound, match="'nope' does not exist on this server"):
        await chat.open("nope")


# -- property: a stream cut anywhere is never a finished turn -------------------------------------
_CAPTURES = ["02_turn_plain_text.txt", "03_turn_with_tool_call.txt", "06_turn_streaming_with_tool.txt"]


@pytest.fixture(scope="module")
def replay_server():
    with FakeServer() as s:
        # no history to re-read and no stream to resume: what the stream showed is all there is
        s.route("GET", CARD, Reply.json(card(streaming=False)))
        yield s


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_CAPTURES), data=st.data())
async def test_a_stream_cut_anywhere_is_never_a_finished_turn(replay_server, name, data):
    cap = load("kagent-0.10.4/" + name)
    frames = cap.data_lines
    cut = data.draw(st.integers(min_value=0, max_value=len(frames)))
    replay_server.route("POST", "/", Reply.sse(sse_body(frames[:cut])))
    async with A2AClient(ServerConfig(url=replay_server.url + "/")) as client:
        chat = Chat(client)
        await chat.open(None)
        try:
            await chat.send("hello")
        except TurnInterrupted:
            interrupted = True
        else:
            interrupted = False
    if cut == len(frames):
        assert not interrupted and chat.conversation.turn_state == "completed"
    else:
        assert interrupted and chat.conversation.turn_state == "interrupted"
        assert any(i.kind.value == "error" and i.text.startswith("Interrupted: ") for i in chat.conversation.items)
