"""Issue item 1 in the app: one item that cannot be drawn is shown as "could not be shown:
<reason> (<size>)"; the rest of the session draws and works, and the app does not exit. (The
failure is injected into the transcript's body drawing: a fault, as a library's RecursionError.)"""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import screen_lines, send, settle, user_texts
from rewindtui.tui.widgets.transcript_items import ItemPainter

pytestmark = pytest.mark.timeout(90)


async def test_one_item_that_cannot_be_drawn_does_not_take_the_app_down(server, monkeypatch):
    original = ItemPainter._body

    def body(self, item, *args, **kwargs):
        if "boom" in item.text:
            raise RecursionError("maximum recursion depth exceeded")
        return original(self, item, *args, **kwargs)

    monkeypatch.setattr(ItemPainter, "_body", body)
    app = make_app(server)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "boom")
        await send(app, pilot, "still here")
        await settle(app, pilot)
        shown = "\n".join(screen_lines(app.chat_screen.transcript))
        assert "could not be shown: RecursionError: maximum recursion depth exceeded" in shown, shown
        assert "still here" in shown
        assert user_texts(app) == ["boom", "still here"]
        assert app.return_code is None  # still running
