"""The rewind preview says what a rewind cannot undo (issue 33): the embedded server marks its
tools (``server/shared/effects.py``), the preview lists the calls that acted outside the agent in
the turns that would go, and leaves out those that changed only the session (``get_weather``)."""

from __future__ import annotations

from kit.apps import make_app
from kit.pilot import SIZE, send, server_tasks, settle
from rewindtui.a2a import contract

DELETE_LINE = "delete_file(name='temp.txt') ran; it acts outside the agent: rewinding does not undo it."


async def test_the_preview_lists_the_delete_that_ran_and_not_the_weather(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, "what is the weather in Tokyo")
        await send(app, pilot, "please delete temp.txt")
        await pilot.press("alt+y")
        await settle(app, pilot)
        await send(app, pilot, "hello")
        # the server's own record carries the marks
        tasks = await server_tasks(server, app.chat.session_id)
        marks = {
            p["data"]["name"]: p["metadata"].get(contract.TOOL_EFFECTS_KEY)
            for t in tasks
            for m in t["history"]
            for p in m["parts"]
            if p.get("metadata", {}).get("kagent_type") == "function_call"
        }
        assert marks["delete_file"] == contract.EFFECTS_OUTSIDE and marks["get_weather"] == contract.EFFECTS_SESSION

        await pilot.press("alt+up")  # the last turn ("hello"): no tool call, nothing to say
        await pilot.pause()
        assert screen.rewind_mode and "⚠" not in screen.banner.text
        await pilot.press("alt+up")  # the delete and everything after it
        await pilot.pause()
        assert "“please delete temp.txt”" in screen.banner.text
        assert DELETE_LINE in screen.banner.text and "get_weather" not in screen.banner.text
        await pilot.press("alt+up")  # from the weather turn: still only the delete is listed
        await pilot.pause()
        assert "“what is the weather in Tokyo”" in screen.banner.text
        assert screen.banner.text.count("⚠") == 1 and DELETE_LINE in screen.banner.text
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.rewind_mode
