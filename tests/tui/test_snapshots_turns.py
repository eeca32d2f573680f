"""Snapshots of the running turn and of connecting (SVGs in snapshots/test_snapshots_turns/): a
stopped turn, an interrupted one, an approval question, a server that cannot give history back,
and the connect screen with its correction fields. Content comes from the real captures and from
events shaped exactly as the embedded server sends them (tests/server/test_confirmation.py), with
fixed ids, so the screens are the same on every machine."""

from __future__ import annotations

from typing import Any

from kit.offline import offline_app, offline_chat, replay
from rewindtui.chat.history import CANNOT_READ_BACK
from rewindtui.client.a2a_client import parse_frame
from rewindtui.config.connection import AGENT, URL, Target
from rewindtui.model import INTERRUPTED
from rewindtui.tui.screens.connect_error import ConnectErrorScreen

SIZE = (100, 30)
META = {"kagent_app_name": "local__NS__demo", "kagent_session_id": "s1", "kagent_user_id": "local"}


def frame(result: dict[str, Any]) -> Any:
    import json

    return parse_frame(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}))


def status(
    task_id: str, state: str, message: dict[str, Any] | None = None, *, final: bool = False, invocation: str = "e-ask"
) -> Any:
    body: dict[str, Any] = {"state": state}
    if message is not None:
        body["message"] = message
    return frame(
        {
            "kind": "status-update",
            "taskId": task_id,
            "contextId": "s1",
            "status": body,
            "final": final,
            "metadata": {**META, "kagent_invocation_id": invocation},
        }
    )


def agent_message(
    message_id: str, parts: list[dict[str, Any]], *, invocation: str = "e-ask", task_id: str = "t-ask"
) -> dict[str, Any]:
    meta = {**META, "kagent_invocation_id": invocation, "kagent_author": "demo", "kagent_adk_partial": False}
    return {
        "kind": "message",
        "role": "agent",
        "messageId": message_id,
        "taskId": task_id,
        "contextId": "s1",
        "parts": parts,
        "metadata": meta,
    }


def test_stopped_turn(snap_compare):
    """Stopped with Esc: the server cancelled the turn, its final status says so, and the status
    line and the toast say how it ended."""
    chat = offline_chat(["02_turn_plain_text"])
    replay(chat, "05_turn_streaming_partials", limit=7)  # stopped among the text deltas
    conv = chat.conversation
    task_id, invocation = conv.current_task_id, conv.turn_invocations()[-1]
    assert task_id is not None
    # the embedded server's final status for a cancelled turn (turns.py ``_finish``)
    canceled = {
        "kind": "message",
        "role": "agent",
        "messageId": "m-cancel",
        "taskId": task_id,
        "contextId": "s1",
        "parts": [{"kind": "text", "text": "The turn was canceled."}],
    }
    conv.apply(status(task_id, "canceled", canceled, final=True, invocation=invocation))
    app = offline_app(chat)

    async def stopped(pilot):
        await pilot.pause()
        app.chat_screen.notify(
            "Stopped: the turn is canceled; what came before the stop stays, marked stopped.", title="Stopped"
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=stopped)


def test_interrupted_turn(snap_compare):
    """The stream was cut and could not be resumed: the turn is interrupted (not finished), the
    view says what the server holds, and the turn bar offers to follow it again."""
    chat = offline_chat(["02_turn_plain_text"])
    replay(chat, "05_turn_streaming_partials", limit=7)
    conv = chat.conversation
    conv.end_turn(INTERRUPTED)
    conv.add_error(
        "Interrupted: the connection was lost (server disconnected); the turn is still running on the server."
    )
    chat.interrupted_task_id = conv.current_task_id
    assert chat.interrupted_task_id is not None
    assert snap_compare(offline_app(chat), terminal_size=SIZE)


def question_chat():
    """A conversation whose last turn waits for approval (kagent's adk_request_confirmation)."""
    chat = offline_chat(["02_turn_plain_text"])
    conv = chat.conversation
    conv.add_user_message(
        {
            "kind": "message",
            "role": "user",
            "messageId": "u-ask",
            "parts": [{"kind": "text", "text": "please delete notes.txt"}],
        }
    )
    call = {"id": "adk-call-1", "name": "delete_file", "args": {"name": "notes.txt"}}
    question = {
        "id": "adk-confirm-1",
        "name": "adk_request_confirmation",
        "args": {
            "originalFunctionCall": call,
            "toolConfirmation": {"hint": "Delete notes.txt?", "confirmed": False, "payload": {"name": "notes.txt"}},
        },
    }
    asked = agent_message(
        "m-question",
        [
            {
                "kind": "data",
                "data": question,
                "metadata": {"kagent_type": "function_call", "kagent_is_long_running": True},
            }
        ],
    )
    conv.apply(
        status(
            "t-ask",
            "working",
            agent_message("m-call", [{"kind": "data", "data": call, "metadata": {"kagent_type": "function_call"}}]),
        )
    )
    conv.apply(status("t-ask", "working", asked))
    conv.apply(status("t-ask", "input-required", asked, final=True))
    assert chat.pending_confirmation() is not None
    return chat


def test_approval_question(snap_compare):
    """The agent's tool waits for approval (input-required, kagent's adk_request_confirmation):
    the question above the composer with Approve / Reject, and the keys in the footer."""
    assert snap_compare(offline_app(question_chat()), terminal_size=SIZE)


def test_server_cannot_give_history_back(snap_compare):
    """A session not used from here on a server without REST and without ListTasks: the view
    says plainly that earlier turns are not shown."""
    chat = offline_chat(["02_turn_plain_text"])
    chat.history_note = CANNOT_READ_BACK
    assert snap_compare(offline_app(chat), terminal_size=SIZE)


def test_connect_screen_with_correction_fields(snap_compare):
    """The agent is not on the controller: said so, with the controller and the agent in fields
    to correct in place (the agent's field has the cursor)."""
    app = offline_app(offline_chat([]))

    async def fail(pilot):
        await pilot.pause()
        app.push_screen(
            ConnectErrorScreen(
                "agent kagent/helpr is not on the kagent controller at http://localhost:8083 (it answered: "
                "Agent kagent/helpr not found); check --agent NAMESPACE/NAME (the controller lists its agents at "
                "http://localhost:8083/api/agents)",
                "Check that the kagent controller at http://localhost:8083 is running and agent kagent/helpr is "
                "deployed (--kagent / --agent); leave them out to use the embedded server.",
                part=AGENT,
                target=Target(kagent="http://localhost:8083", agent="kagent/helpr"),
                check=lambda target: "",
            )
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=fail)


def test_connect_screen_refuses_a_bad_url_in_place(snap_compare):
    app = offline_app(offline_chat([]))

    async def fail(pilot):
        await pilot.pause()
        app.push_screen(
            ConnectErrorScreen(
                "cannot reach the agent at http://127.0.0.1:9/ (All connection attempts failed); is the server "
                "running? check --url (or leave it out to use the embedded server)",
                "Check that an A2A agent is serving http://127.0.0.1:9/ (--url / REWINDTUI_URL); leave it out to "
                "use the embedded server.",
                part=URL,
                target=Target(url="http://127.0.0.1:9/"),
                check=lambda target: "agent URL: not an http(s) URL: 'localhost:8080'",
            )
        )
        await pilot.pause()
        field = app.screen.query_one("#connect-url")
        field.value = ""
        await pilot.press(*"localhost:8080", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=fail)
