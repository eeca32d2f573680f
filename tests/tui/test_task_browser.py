"""The task browser (F8, /tasks): a session's tasks with the rewound ones marked, a task's state,
history, artifacts and raw JSON; copy and save; cancel a running task (after a yes). Against the
real embedded server (rewind) and a2a-sdk's own server (cancel); a snapshot from the captures."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from kit.apps import app_at, make_app
from kit.offline import offline_app, offline_chat
from kit.pilot import settle, turns, wait_until
from kit.servers import embedded_fixture
from rewindtui.a2a import contract
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.task_browser import TaskBrowserScreen, details, label, task_kind

server = embedded_fixture("task-browser")


def listed(screen: TaskBrowserScreen) -> list[str]:
    from textual.widgets import OptionList

    listing = screen.query_one("#tasks-list", OptionList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


@pytest.mark.slow
async def test_the_browser_shows_rewound_tasks_marked(server, tmp_path):
    app = make_app(server, data_dir=tmp_path)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        invocations = await turns(app, pilot, "first", "second", "third")
        await app.chat.rewind(invocations[1])  # the second and third turns are rewound
        await settle(app, pilot)
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskBrowserScreen))
        screen = app.screen
        await wait_until(pilot, lambda: bool(screen.tasks))
        kinds = [task_kind(t) for t in screen.tasks]
        assert kinds.count("rewound") == 2 and kinds.count("rewind") == 1
        assert sum("[rewound]" in line for line in listed(screen)) == 2
        assert "2 rewound" in str(screen.query_one("#tasks-title").render())
        rewound_at = kinds.index("rewound")
        screen.query_one("#tasks-list").highlighted = rewound_at
        await pilot.pause()
        shown = str(screen.query_one("#tasks-detail").render())
        assert "rewound by" in shown and "raw JSON:" in shown and "second" in shown
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(copied))
        assert copied[-1] == screen.tasks[rewound_at]["id"]
        await pilot.press("s")
        saved = tmp_path / "tasks" / f"{screen.tasks[rewound_at]['id']}.json"
        await wait_until(pilot, saved.exists)
        assert json.loads(saved.read_text())["id"] == screen.tasks[rewound_at]["id"]
        assert [
            t for t in ("second", "third") if t in [i.text for i in app.chat.conversation.items if i.role == "user"]
        ] == []


@pytest.fixture
def sdk():
    from full_servers import full_app

    from asgi_thread import ServeInThread

    served = ServeInThread(factory=lambda url: full_app(url + "/")).start()
    yield served
    served.stop()


@pytest.mark.slow
async def test_cancel_a_running_task_after_a_yes(sdk, tmp_path):
    app = app_at(sdk.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.chat_screen.query_one("Composer").text = "slow " * 60
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(i.task_id for i in app.chat.conversation.items))
        app.chat_screen.query_one("Composer").text = "/tasks"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskBrowserScreen))
        screen = app.screen
        await wait_until(pilot, lambda: bool(screen.tasks))
        assert "ListTasks" in str(screen.query_one("#tasks-title").render())
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.tasks and screen.tasks[-1]["status"]["state"] == "TASK_STATE_CANCELED")
        assert "canceled" in listed(screen)[-1]


def test_labels_and_details():
    task = {
        "id": "abcdef0123",
        "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "history": [{"role": "ROLE_USER", "parts": [{"text": "hi"}]}],
        "metadata": {contract.REWOUND_KEY: True, contract.REWOUND_BY_TASK_KEY: "r-1", contract.REWOUND_AT_KEY: "2026"},
    }
    assert label(task) == "abcdef01  completed       [rewound]  hi"
    text = details(task)
    assert "rewound by r-1 at 2026" in text and "  user: hi" in text and '"id": "abcdef0123"' in text


def test_snapshot_of_the_task_browser(snap_compare):
    """Tasks from the kagent 0.10.4 capture of tasks/get (tests/fixtures/kagent-0.10.4/08_tasks_get.txt),
    one copy marked rewound as the embedded server marks them."""
    from captures import load

    task = load("kagent-0.10.4/08_tasks_get.txt").json_body["result"]
    rewound = copy.deepcopy(task)
    rewound["id"] = "rewound-task-0001"
    rewound.setdefault("metadata", {}).update(
        {
            contract.REWOUND_KEY: True,
            contract.REWOUND_BY_TASK_KEY: "rewind-task-0001",
            contract.REWOUND_AT_KEY: "2026-11-28T10:00:00Z",
        }
    )
    chat = offline_chat([])
    chat.client.config.api = "http://127.0.0.1:9/api"

    async def session_tasks(session_id, include_rewound=False):
        return [task, rewound]

    chat.client.session_tasks = session_tasks  # type: ignore[method-assign]
    app = offline_app(chat)

    async def open_browser(pilot):
        await pilot.pause()
        app.action_task_browser()
        await wait_until(pilot, lambda: isinstance(app.screen, TaskBrowserScreen) and bool(app.screen.tasks))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=open_browser)


@pytest.mark.slow
async def test_save_and_copy_a_tasks_artifacts(server, tmp_path):
    """F8, a: the highlighted task's artifacts into a directory the user gives (never over a file
    there; it says where only what it wrote); c: their text on the clipboard."""
    from rewindtui.tui.screens.path_prompt import PathPrompt

    app = make_app(server, data_dir=tmp_path / "data")
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(app, pilot, "keep this answer")
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(app.screen, TaskBrowserScreen) and bool(app.screen.tasks))
        browser = app.screen
        task = browser.current
        (artifact,) = task["artifacts"]
        text = "".join(p.get("text", "") for p in artifact["parts"])
        assert "keep this answer" in text
        await pilot.press("c")
        await wait_until(pilot, lambda: bool(copied))
        assert copied[-1] == text
        out = tmp_path / "saved"
        for wanted in (1, 2):
            await pilot.press("a")
            await wait_until(pilot, lambda: isinstance(app.screen, PathPrompt))
            prompt = app.screen
            from textual.widgets import Input

            prompt.query_one(Input).value = str(out)
            await pilot.press("enter")
            await wait_until(pilot, lambda n=wanted: out.exists() and len(list(out.glob("*.txt"))) == n)
        files = sorted(out.iterdir())
        assert [f.read_text(encoding="utf-8") for f in files] == [text, text]
        assert any(f.name.endswith(" (1).txt") for f in files)  # the second save took a free name
        said = [n.message for n in app._notifications]
        assert sum(m.startswith(f"Saved to {out}: ") for m in said) == 2
