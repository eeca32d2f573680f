"""The transcript keeps only the last drawn items (an LRU of ``_CACHE_ITEMS``): scrolling a long
session evicts what scrolled away, and an evicted item is drawn again exactly as before -- its
text, its tool calls with their results, its styles. Correctness only; timings live in
bench/bench_app.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from textual.geometry import Region

from kit.offline import capabilities
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets import transcript as transcript_module
from synthetic import make_tasks

MESSAGES = 1200  # several times the cache's size


def _with_results(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every tool call of the synthetic session its result, different for each call."""
    for task in tasks:
        for m in list(task["history"]):
            for part in m["parts"]:
                if part.get("kind") == "data":
                    call = part["data"]
                    task["history"].append(
                        {
                            "kind": "message",
                            "messageId": f"r-{call['id']}",
                            "role": "agent",
                            "contextId": m["contextId"],
                            "taskId": m["taskId"],
                            "metadata": m["metadata"],
                            "parts": [
                                {
                                    "kind": "data",
                                    "data": {
                                        "id": call["id"],
                                        "name": call["name"],
                                        "response": {"result": f"sunny in {call['args']['city']}"},
                                    },
                                    "metadata": {"kagent_type": "function_response"},
                                }
                            ],
                        }
                    )
    return tasks


def _chat() -> Chat:
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = capabilities()
    chat = Chat(client)
    chat.conversation.session_id = "bench-session"
    chat.conversation.load_tasks(_with_results(make_tasks(MESSAGES)))
    return chat


def _screen(transcript: Any) -> list[list[tuple[str, Any]]]:
    """Every line in view, drawn as a frame draws them, segment by segment with its style."""
    strips = transcript.render_lines(Region(0, 0, transcript.size.width, transcript.size.height))
    return [[(s.text, s.style) for s in strip] for strip in strips]


async def _pages(transcript: Any, pilot: Any, count: int) -> list[tuple[float, list]]:
    """(scroll position, the lines in view) for the first ``count`` pages. Each page is drawn
    twice: the first draw makes its items' heights exact (they were estimates), the second is
    what a later visit must show."""
    out = []
    for page in range(count):
        transcript.scroll_to(y=page * transcript.size.height, animate=False, immediate=True)
        await pilot.pause()
        _screen(transcript)
        out.append((transcript.scroll_y, _screen(transcript)))
    return out


async def test_evicted_items_redraw_identically_with_their_tool_results():
    chat = _chat()
    items = chat.conversation.items
    with_tools = [it for it in items if it.kind is ItemKind.MESSAGE and it.raw is not None and it.tools]
    assert with_tools and all(it.tools[0].has_result for it in with_tools)
    app = RewindApp(chat=chat)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        transcript.expanded.update(it.key for it in with_tools)  # show each call's result in full
        transcript._cache.clear()
        transcript._relayout(0)
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        # the first pages, drawn while nothing else is cached
        pages = await _pages(transcript, pilot, 6)
        first_key = items[0].key
        assert first_key in transcript._cache
        # to the bottom, a page at a time: everything scrolled past is evicted
        while transcript.scroll_y < transcript.max_scroll_y:
            transcript.action_page(1)
            _screen(transcript)
        assert len(transcript._cache) <= transcript_module._CACHE_ITEMS
        assert first_key not in transcript._cache
        # back to the top: the same pages, line for line, style for style
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        again = await _pages(transcript, pilot, 6)
        assert again == pages
        # and the drawn tool results are each call's own (turn 10's call shows City 10's result)
        text = "\n".join("".join(s for s, _ in line) for _, page in again for line in page)
        assert "get_weather" in text and "sunny in City 10" in text
        for turn in range(10, 10 * len(with_tools) + 1, 10):
            if f"City {turn}" in text and f'"city": "City {turn}"' in text:
                assert f"sunny in City {turn}" in text


async def test_heights_stay_exact_after_eviction_so_the_view_does_not_jump():
    chat = _chat()
    app = RewindApp(chat=chat)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        while transcript.scroll_y < transcript.max_scroll_y:
            transcript.action_page(1)
            _screen(transcript)
        starts = list(transcript._starts)
        height = transcript.virtual_size.height
        # scrolling back up redraws evicted items: they measure what they measured before
        while transcript.scroll_y > 0:
            transcript.action_page(-1)
            _screen(transcript)
        assert transcript._starts == starts and transcript.virtual_size.height == height
        assert all(transcript.lines.exact)


async def test_a_change_that_does_not_say_where_items_came_still_lays_out_every_item():
    """Issue 20 (11): the layout never stays short of the conversation (it could not scroll to
    what it holds until a resize re-laid it out)."""
    from kit.offline import offline_app, offline_chat
    from rewindtui.model import Change

    app = offline_app(offline_chat())
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        conv = app.chat.conversation
        conv.items[1:1] = list(conv.items)  # items came without a Change saying where
        transcript.apply_change(Change())
        await pilot.pause()
        assert len(transcript.lines.heights) == len(conv.items)
        assert transcript.virtual_size.height == transcript._starts[-1] >= len(conv.items)


async def test_keys_that_scroll_repaint_what_is_shown_and_move_the_scrollbar():
    """Issue 20 (11): PageUp, ↑ and PageDown in the transcript moved its offset but left the lines on
    screen (and the scrollbar) where they were until something else repainted them."""
    from kit.pilot import frame_lines

    app = RewindApp(chat=_chat())
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.chat_screen.transcript
        transcript.focus()
        await pilot.pause()
        for key in ("pageup", "up", "pagedown"):
            before, y = frame_lines(transcript), transcript.scroll_y
            await pilot.press(key)
            await pilot.pause()
            assert transcript.scroll_y != y, key
            assert frame_lines(transcript) != before, key
            assert transcript.vertical_scrollbar.position == transcript.scroll_y, key
