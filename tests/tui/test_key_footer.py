"""The footer is rebuilt only when the keys it shows change (``tui/widgets/key_footer.py``), and
then it shows the change. Offline app: no server needed."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from kit.offline import offline_app
from kit.pilot import wait_until
from rewindtui.tui.widgets.key_footer import KeyFooter


def key_widgets(footer: KeyFooter) -> list[FooterKey]:
    return list(footer.query(FooterKey))


def labels(footer: KeyFooter) -> list[str]:
    return [f"{key.key_display} {key.description}".strip() for key in key_widgets(footer)]


async def test_the_same_keys_are_not_rebuilt_and_a_changed_key_is_shown():
    app = offline_app()
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: bool(key_widgets(footer)))
        await pilot.pause()
        before = key_widgets(footer)
        assert any("Send" in label for label in labels(footer))
        for _ in range(5):  # what focus changes and state updates do all the time
            app.chat_screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert key_widgets(footer) == before  # the very same widgets: nothing rebuilt
        # a change of what a key offers: a read-only session stops offering Enter to send
        app.chat_screen.composer.read_only_because("the session is another user's")
        await wait_until(pilot, lambda: not any("Send" in label for label in labels(footer)))
        app.chat_screen.composer.read_only_because("")
        await wait_until(pilot, lambda: any("Send" in label for label in labels(footer)))
