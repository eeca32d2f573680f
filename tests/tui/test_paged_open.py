"""Opening a long session by pages in the app, against the real embedded server (seeded with
``bench/seed_turns.py``) behind the fault proxy: the newest turns are shown first, the older ones
come in front without moving what the user looks at, rewind waits for them and then cuts at the
right turn on the server, and a page that cannot be read is said, re-read, never passed off as
the whole session."""

from __future__ import annotations

import itertools
import sys
import threading
from pathlib import Path

import pytest

from kit.apps import proxied_app

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import rewindtui.chat.limits as chat_module
from faults.proxy import Fault, FaultProxy, Seen
from kit.pilot import notifications, screen_lines, server_tasks, settle, user_texts_of, wait_until
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import Conversation
from rewindtui.server import EmbeddedServer
from rewindtui.tui.app import RewindApp
from seed_turns import seed_session

SIZE = (100, 30)
SID = "long"
TURNS = 300
PAGE = 40  # 8 pages: 7 of 40 turns and the oldest of 20

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    with EmbeddedServer(tmp_path_factory.mktemp("paged-open")) as srv:
        srv.call(seed_session(srv.app.state.parts, SID, TURNS))
        with FaultProxy(srv.base_url) as proxy:
            yield srv, proxy


_fresh = itertools.count(1)


@pytest.fixture
def fresh(seeded):
    """A long session of this test's own (a rewind leaves a session short, a fault is per session)."""
    srv, _ = seeded
    sid = f"{SID}-{next(_fresh)}"
    srv.call(seed_session(srv.app.state.parts, sid, TURNS))
    return sid


@pytest.fixture(autouse=True)
def small_pages(monkeypatch, seeded):
    monkeypatch.setattr(chat_module, "OPEN_PAGE_TASKS", PAGE)
    seeded[1].clear()
    yield


def tasks_request(req: Seen, sid: str = SID) -> bool:
    return req.method == "GET" and req.path.split("?", 1)[0].endswith(f"/sessions/{sid}/tasks")


def older_page(req: Seen, sid: str = SID) -> bool:
    return tasks_request(req, sid) and "before=" in req.path


def whole_view(tasks: list[dict]) -> list[tuple]:
    conv = Conversation(SID)
    conv.load_tasks(tasks)
    return [(it.key, it.role, it.text, it.invocation_id) for it in conv.items]


def shown(app: RewindApp) -> list[tuple]:
    return [(it.key, it.role, it.text, it.invocation_id) for it in app.chat.conversation.items]


async def test_a_long_session_shows_its_newest_turns_first_then_older_ones_in_front(seeded, fresh):
    srv, proxy = seeded
    first_older = threading.Event()
    proxy.add(Fault(lambda req: older_page(req, fresh), hold=first_older))  # the first older page waits for the test
    app = proxied_app(proxy, srv, fresh)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat is not None and len(app.chat.conversation.items) > 0)
        await pilot.pause()
        screen = app.chat_screen
        transcript = screen.transcript
        chat = app.chat
        # the first frame: the newest page, at its end; a note says older turns are coming
        assert len(chat.conversation.items) == 2 * PAGE
        assert any(f"message number {TURNS - 1}:" in line for line in screen_lines(transcript))
        perms = chat.permissions()
        assert not perms.can_rewind and "older turns are still loading" in perms.rewind_reason
        assert perms.history_note.startswith("Loading older turns")
        assert chat.why_not_redo() and chat.why_not_rewound()
        # the user scrolls to the top of what is there while the older turns load
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        top_item = chat.conversation.items[0]
        top_line = screen_lines(transcript)[0]
        assert chat.conversation.items[0] is top_item  # nothing older came yet
        first_older.set()
        await wait_until(pilot, lambda: chat.conversation.older_token is None, timeout=30)
        await pilot.pause()
        # what the user looked at stays where it was: the same lines, older turns above them
        assert not transcript.follow
        assert screen_lines(transcript)[0] == top_line
        assert transcript._item_at(int(transcript.scroll_y))[0] == chat.conversation.items.index(top_item) > 0
        assert shown(app) == whole_view(await server_tasks(srv, fresh))
        assert chat.permissions().can_rewind and chat.permissions().history_note == ""
        pages = proxy.seen_by(lambda req: tasks_request(req, fresh))
        assert len(pages) == 8 and all(f"limit={PAGE}" in p.path for p in pages)  # never the whole answer at once
        # rewind to before an old turn, loaded from the oldest page: the server cuts there
        target = chat.conversation.turn_invocations()[9]
        index = chat.conversation.index_of_invocation(target)
        assert screen.enter_rewind_mode(index)
        await pilot.pause()
        assert transcript.cursor == index and any("message number 9:" in line for line in screen_lines(transcript))
        await pilot.press("enter")
        await settle(app, pilot)
        on_server = await server_tasks(srv, fresh)
        assert [t.split(":")[0] for t in user_texts_of(on_server)] == [f"message number {i}" for i in range(9)]
        assert shown(app) == whole_view(on_server)


async def test_a_page_that_cannot_be_read_is_re_read_then_said_never_passed_off_as_whole(seeded, fresh):
    srv, proxy = seeded
    proxy.add(Fault(lambda req: older_page(req, fresh), status=500, body=b'{"error": "database is locked"}', times=2))
    app = proxied_app(proxy, srv, fresh)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: (
                app.chat is not None and app.chat.older_error != "" and app.chat.conversation.older_token is not None
            ),
        )
        await settle(app, pilot)
        chat = app.chat
        # the first failure: re-read from the newest page; the second: said, and the view is partial
        newest = [r for r in proxy.seen_by(lambda req: tasks_request(req, fresh)) if "before=" not in r.path]
        assert len(newest) == 2
        assert len(chat.conversation.items) == 2 * PAGE
        note = chat.permissions().history_note
        assert "Older turns could not be loaded" in note and "database is locked" in note
        assert f"only the newest {2 * PAGE} messages are shown" in note
        assert any("Older turns could not be loaded" in n for n in notifications(app))
        perms = chat.permissions()
        assert not perms.can_rewind and not perms.can_fork and "could not be loaded" in perms.rewind_reason
        # Reload session: the whole session, as the server has it
        app.chat_screen.switching.reload()
        await settle(app, pilot)
        assert chat.conversation.older_token is None and chat.permissions().history_note == ""
        assert shown(app) == whole_view(await server_tasks(srv, fresh))


async def test_a_page_that_fails_once_is_re_read_and_the_session_completes(seeded, fresh):
    srv, proxy = seeded
    proxy.add(Fault(lambda req: older_page(req, fresh), reset=True, times=1))
    app = proxied_app(proxy, srv, fresh)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: app.chat is not None and app.chat.session_id == fresh and app.chat.conversation.older_token is None,
            timeout=30,
        )
        await settle(app, pilot)
        assert app.chat.older_error == ""
        assert shown(app) == whole_view(await server_tasks(srv, fresh))


async def test_chat_open_reads_a_long_session_page_by_page(seeded):
    srv, proxy = seeded
    async with A2AClient(ServerConfig(url=proxy.rewrite(srv.agent_url), api=proxy.rewrite(srv.api_url))) as client:
        chat = Chat(client)
        await chat.open(SID)  # not the app: every page before open returns
        assert chat.conversation.older_token is None
        assert shown_of(chat) == whole_view(await server_tasks(srv, SID))
    assert all(f"limit={PAGE}" in r.path for r in proxy.seen_by(tasks_request))


def shown_of(chat: Chat) -> list[tuple]:
    return [(it.key, it.role, it.text, it.invocation_id) for it in chat.conversation.items]
