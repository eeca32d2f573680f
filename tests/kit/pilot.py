"""Driving the real app under Textual's ``Pilot`` and reading what it and the server show."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual import events
from textual.worker import WorkerCancelled

from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind, extract_messages_from_tasks
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.transcript import Transcript

SIZE = (120, 40)


async def settle(app: RewindApp, pilot) -> None:
    """Let the app handle what is pending and finish its workers (a turn, a load). One that a
    newer worker of its exclusive group replaced (a re-read of the rewound turns, of the sessions)
    ends cancelled: that is how it ends, not a failure; a worker that failed still fails the test.
    The app's first connect starts after its first frame: that is waited for too."""
    await pilot.pause()
    await wait_until(pilot, lambda: not app.connecting, timeout=60)
    results = await asyncio.gather(*(worker.wait() for worker in list(app.workers)), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, WorkerCancelled):
            raise result
    await pilot.pause()


def burst(app: RewindApp, keys: list[str]) -> None:
    """Queue every key at once, as a terminal delivers a paste without bracketed paste, ssh
    batching or ``tmux send-keys``: none is handled before all are queued."""
    for key in keys:
        character = {"enter": "\r", "space": " "}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds, and still holds once every widget has handled
    what was sent to it (``pilot.pause()``): no fixed sleeps.

    Between checks the app runs on its own (``asyncio.sleep``); ``pilot.pause`` is taken only
    once the condition holds. A pause sends a message to every widget of the screen and waits
    for each to be handled: about 2 ms of CPU, against 0.14 ms for the sleep. Taken before every
    check, every 10 ms, it cost a sixth of a core for as long as a test waited (a reply, a
    server, a timer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if condition():
            await pilot.pause()
            if condition():
                return
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def send(app: RewindApp, pilot, text: str) -> None:
    app.chat_screen.composer.focus()
    app.chat_screen.composer.text = text
    await pilot.press("enter")
    await settle(app, pilot)


def texts(app: RewindApp) -> list[tuple[str, str]]:
    return [(it.role, it.text) for it in app.chat.conversation.items if it.kind is ItemKind.MESSAGE and it.text]


def user_texts(app: RewindApp) -> list[str]:
    return [t for r, t in texts(app) if r == "user"]


async def turns(app: RewindApp, pilot, *prompts: str) -> list[str]:
    await settle(app, pilot)
    for text in prompts:
        await send(app, pilot, text)
    return app.chat.conversation.turn_invocations()


async def three_turns(app: RewindApp, pilot) -> list[str]:
    return await turns(app, pilot, "first", "weather in Oslo", "third")


async def server_tasks(server, session_id: str) -> list[dict]:
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
        return await client.session_tasks(session_id)


def user_texts_of(tasks: list[dict]) -> list[str]:
    return [it.text for it in extract_messages_from_tasks(tasks) if it.role == "user"]


async def server_users(server, app: RewindApp) -> list[str]:
    return user_texts_of(await server_tasks(server, app.chat.session_id))


def screen_lines(transcript: Transcript) -> list[str]:
    return [transcript.render_line(y).text for y in range(transcript.scrollable_content_region.height)]


def header_offset(transcript: Transcript, index: int, label: str) -> tuple[int, int]:
    """Offset (within the transcript) of a button in the header line of item ``index``."""
    transcript.cursor = None
    transcript.follow = False
    transcript._make_exact(index, index + 1)
    transcript._set_y(transcript._starts[index])
    lines = transcript._strips(index, transcript._layout_width)
    for line_no, strip in enumerate(lines):
        if label in strip.text:
            y = transcript._starts[index] + line_no - int(transcript.scroll_y)
            return strip.text.index(label) + 1, y
    raise AssertionError(f"{label!r} not in item {index}")


def notifications(app: RewindApp) -> list[str]:
    return [n.message for n in app._notifications]


class ManualClock:
    """A clock that moves only when the test moves it: given to the Esc key (``escape.clock``), two
    Escs pressed without :meth:`advance` between them are one Esc Esc however slowly a loaded
    machine delivers them, and an :meth:`advance` past the window makes them two single presses."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def hold_escape_clock(app: RewindApp) -> ManualClock:
    clock = ManualClock()
    app.chat_screen.escape.clock = clock
    return clock


def frame_lines(widget) -> list[str]:
    """The lines ``widget`` gives the next frame: through Textual's own line cache, so lines that
    were never marked for repaint show as they were (unlike ``render_line``, which draws afresh)."""
    from textual.geometry import Region

    return [strip.text for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]
