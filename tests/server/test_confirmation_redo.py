"""A question brought back by a redo (the undo of a rewind) and answered then: the answer, the
tool's result and the agent's reply stay in the session's history, and the turn is completed --
read back by a fresh client, over loopback against the embedded server (real ADK and SQLite)."""

from __future__ import annotations

import httpx
from srvkit import A2A, Api
from test_confirmation import answer_message, ask, new_sid, stream_message, tool_answer
from test_redo import check, redo, rewind

from rewindtui.a2a import contract
from rewindtui.model import Conversation
from rewindtui.server import EmbeddedServer


def test_a_question_answered_after_a_redo_stays_answered(server: EmbeddedServer, make_a2a, make_api, dialect) -> None:
    a2a, api = make_a2a(server, dialect), make_api(server)
    sid = new_sid()
    turn, _question = ask(a2a, sid, "delete z.txt")
    rewind(api, sid, turn.invocation_id)
    resp = redo(api, sid)
    assert resp.status_code == 200, resp.text
    answer = answer_message(a2a, turn.task_id, sid, "approve")
    events = stream_message(a2a, answer)
    assert "'status': 'deleted'" in tool_answer(events)
    # a fresh client reads the session back as the app loads it: the answer, the tool's result and
    # the reply are there, and nothing waits
    with httpx.Client(timeout=30) as fresh:
        tasks = Api(fresh, server.api_url).tasks(sid)
        task = A2A(fresh, server.agent_url, dialect).get_task(turn.task_id)
    view = Conversation(sid)
    view.load_tasks(tasks)
    shown = [item.text for item in view.items]
    assert "Approved" in shown, shown
    assert any("Tool delete_file returned: {" in t and "'status': 'deleted'" in t for t in shown), shown
    assert view.turn_state == "idle" and view.input_task_id is None
    assert task["status"]["state"] == "completed"
    # the redo's Task, the session's effective history, holds them (and counts them)
    (effective,) = [t for t in tasks if (t.get("metadata") or {}).get(contract.EFFECTIVE_HISTORY_KEY)]
    ids = [m["messageId"] for m in effective["history"]]
    assert ids == [m["messageId"] for m in task["history"]] and answer["messageId"] in ids
    assert effective["metadata"][contract.EFFECTIVE_HISTORY_TOTAL_KEY] == len(ids)
    assert check(server, sid) == []
    # the agent's session took the answer: the file stays deleted on the next turn, and a rewind
    # before that turn keeps the answered turn whole
    nxt, _ = ask(a2a, sid, "delete y.txt")
    events = stream_message(a2a, answer_message(a2a, nxt.task_id, sid, "approve"))
    assert "'deleted_files': ['z.txt', 'y.txt']" in tool_answer(events)
    back = rewind(api, sid, nxt.invocation_id)
    assert [m["messageId"] for m in back["history"]] == ids
