"""ctrl+z after rewinding nearly all of a long session, and ctrl+r after it, in the app against the
real embedded server behind the fault proxy: every read of the session is a bounded page (its tasks'
histories cut), never the whole session in one request (at 25,000 turns that request timed out
after 91 s and left the view wrong), and the view ends as a fresh open shows the session.

The bounds are made small (a tail of 3, pages of 10 tasks cut to 5 messages) so that 60 turns
show what a long session does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.apps import proxied_app

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import rewindtui.chat.limits as limits_module
import rewindtui.chat.pages as pages_module
from faults.proxy import FaultProxy, Seen
from kit.pilot import notifications, settle, wait_until
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer
from seed_turns import seed_session

SIZE = (100, 30)
SID = "long"
TURNS = 60

pytestmark = pytest.mark.slow


def tasks_read(req: Seen) -> bool:
    return req.method == "GET" and req.path.split("?", 1)[0].endswith(f"/sessions/{SID}/tasks")


def message_ids(chat: Chat) -> list[str]:
    return [mid for item in chat.conversation.items for mid in item.message_ids]


async def test_ctrl_z_and_ctrl_r_after_rewinding_most_of_a_long_session_read_it_by_bounded_pages(tmp_path, monkeypatch):
    monkeypatch.setattr(limits_module, "ANSWER_TAIL", 3)
    monkeypatch.setattr(limits_module, "OPEN_PAGE_TASKS", 10)
    monkeypatch.setattr(pages_module, "PAGE_HISTORY", 5)
    with EmbeddedServer(tmp_path) as srv, FaultProxy(srv.base_url) as proxy:
        srv.call(seed_session(srv.app.state.parts, SID, TURNS))
        app = proxied_app(proxy, srv, SID)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.chat is not None and app.chat.conversation.older_token is None)
            await settle(app, pilot)
            chat, screen = app.chat, app.chat_screen
            whole = message_ids(chat)
            assert len(whole) == 2 * TURNS
            # rewind to before the second turn: the preview, then Enter
            assert screen.enter_rewind_mode(
                chat.conversation.index_of_invocation(chat.conversation.turn_invocations()[1])
            )
            await pilot.press("enter")
            await settle(app, pilot)
            assert len(chat.conversation.turn_invocations()) == 1
            assert screen.status.undo == f"ctrl+z: undo the rewind of {TURNS - 1} turns"
            proxy.clear()
            await pilot.press("ctrl+z")
            await wait_until(pilot, lambda: chat.redo_label() is not None and not chat.rewinding, timeout=30)
            await settle(app, pilot)
            assert f"Undid the rewind: {TURNS - 1} turns back, with the agent's state as it was." in notifications(app)
            reads = [r.path for r in proxy.seen_by(tasks_read)]
            assert reads and all("limit=" in p and "history_length=" in p for p in reads), reads
            assert message_ids(chat) == whole
            assert any(f"message number {TURNS - 1}:" in item.text for item in chat.conversation.items[-2:])
            # ctrl+r: the rewind again (a bounded answer joined to the view), then ctrl+z once more
            proxy.clear()
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: chat.undo_label() is not None and not chat.rewinding, timeout=30)
            await settle(app, pilot)
            assert len(chat.conversation.turn_invocations()) == 1
            await pilot.press("ctrl+z")
            await wait_until(pilot, lambda: chat.redo_label() is not None and not chat.rewinding, timeout=30)
            await settle(app, pilot)
            reads = [r.path for r in proxy.seen_by(tasks_read)]
            assert reads and all("limit=" in p and "history_length=" in p for p in reads), reads
            assert message_ids(chat) == whole
        async with A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url)) as client:
            fresh = Chat(client)
            await fresh.open(SID)
            assert message_ids(fresh) == whole  # the server holds what the view showed
