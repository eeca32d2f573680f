"""The footer's rebuilds (``tui/widgets/key_footer.py``): Textual's footer rebuilds its keys once
per change of the bindings, each rebuild mounting and restyling every key; a screen's start made
six of them before the app was connected (issue 32, the launch's CPU). Here the changes before a
rebuild make one, an unchanged key set none, and the keys shown are still the bindings' own."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat
from kit.pilot import wait_until
from rewindtui.tui.widgets.key_footer import KeyFooter


def _keys(footer: KeyFooter) -> list[tuple[str, str]]:
    return [(key.key, key.description) for key in footer.query("FooterKey")]  # type: ignore[attr-defined]


async def test_a_burst_of_binding_changes_is_one_rebuild_and_no_change_is_none() -> None:
    app = offline_app(offline_chat())
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: bool(footer.children))
        await pilot.pause()
        builds: list[int] = []
        compose = footer.compose

        def counted():  # type: ignore[no-untyped-def]
            builds.append(1)
            return compose()

        footer.compose = counted  # type: ignore[method-assign]
        shown = _keys(footer)
        for _ in range(5):  # the bindings did not change: nothing to rebuild
            app.chat_screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert builds == [] and _keys(footer) == shown

        # a real change (rewind mode's keys), announced five times over: one rebuild, its keys
        chat = app.chat
        assert chat is not None
        second = chat.conversation.turn_invocations()[1]
        app.chat_screen.enter_rewind_mode(chat.conversation.index_of_invocation(second))
        for _ in range(4):
            app.chat_screen.refresh_bindings()
        await wait_until(pilot, lambda: _keys(footer) != shown)
        await pilot.pause()
        assert len(builds) == 1
        built = _keys(footer)
        footer.call_later(footer.recompose)  # built from the bindings as they are now, as Textual's does
        await wait_until(pilot, lambda: len(builds) == 2)
        await pilot.pause()
        assert _keys(footer) == built and ("enter", "Rewind") in built


async def test_keys_are_built_with_the_footers_compact_value() -> None:
    app = offline_app(offline_chat())
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: bool(footer.children))
        keys = list(footer.query("FooterKey"))
        bound = [k for k in keys if "-command-palette" not in k.classes]
        assert bound and all(not k.compact and not k.has_class("-compact") for k in bound)
        footer.compact = True  # the binding still carries a change to every key
        await pilot.pause()
        assert all(k.compact and k.has_class("-compact") for k in bound)


async def test_the_first_build_is_the_composers_keys(monkeypatch) -> None:
    """The chat screen focuses its composer first (``AUTO_FOCUS``): the footer's first build shows
    the composer's keys (Textual's default focused the hidden sessions panel first: its keys were
    built and shown, then the composer's)."""
    shown: list[list[str]] = []
    compose = KeyFooter.compose

    def counted(self):  # type: ignore[no-untyped-def]
        widgets = list(compose(self))
        if self._bindings_ready:
            shown.append([getattr(w, "action", "") for w in widgets])
        return iter(widgets)

    monkeypatch.setattr(KeyFooter, "compose", counted)
    app = offline_app(offline_chat())
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: bool(footer.children))
        await pilot.pause()
        await pilot.pause()
        assert app.focused is app.chat_screen.composer
        assert "submit" in shown[0] and "rename" not in shown[0], shown  # the composer's, not the panel's


async def test_a_read_only_composer_takes_send_away_and_gives_it_back() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: any(description == "Send" for _, description in _keys(footer)))
        app.chat_screen.composer.read_only_because("the session is another user's")
        await wait_until(pilot, lambda: not any(description == "Send" for _, description in _keys(footer)))
        app.chat_screen.composer.read_only_because("")
        await wait_until(pilot, lambda: any(description == "Send" for _, description in _keys(footer)))


async def test_keys_that_do_not_fit_whole_are_hidden_not_cut() -> None:
    """Textual's footer cut the last key that overflowed mid-word ("esc Sto" at 72 columns): the
    keys shown now end before the palette key, the rest are hidden, and they come back when the
    terminal is wide enough."""
    app = offline_app(offline_chat())
    async with app.run_test(size=(72, 30)) as pilot:
        footer = app.chat_screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: bool(footer.children))
        await pilot.pause()

        def shown_and_hidden() -> tuple[list[str], list[str]]:
            palette = footer.query_one(".-command-palette")
            keys = [key for key in footer.query("FooterKey") if not key.has_class("-command-palette")]
            shown = [key for key in keys if key.display]
            assert keys[: len(shown)] == shown  # the leading keys, in order
            assert shown and all(key.region.right <= palette.region.x for key in shown)  # whole
            return [k.description for k in shown], [k.description for k in keys if not k.display]

        narrow, hidden = shown_and_hidden()
        assert narrow[0] == "Quit" and hidden  # not everything fits in 72 columns
        await pilot.resize_terminal(160, 30)
        await wait_until(pilot, lambda: not shown_and_hidden()[1])
        wide, _ = shown_and_hidden()
        assert wide == narrow + hidden
        await pilot.resize_terminal(50, 30)
        await wait_until(pilot, lambda: len(shown_and_hidden()[0]) < len(narrow))
        shown_and_hidden()
