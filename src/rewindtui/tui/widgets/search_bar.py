"""The search box (ctrl+f, ``/search``): one line of text searched as it is typed, the count of hits
("3 of 17") and what the keys do. It searches nothing itself: it says what the user typed and
pressed (:class:`SearchBar.Changed`, :class:`SearchBar.Step`, :class:`SearchBar.Closed`) and shows
what it is told (:meth:`SearchBar.show_count`); ``tui/search_control.py`` does the rest.

Every printable key is text of the search, never a command, and never reaches the composer. Enter
and ↑ go to the hit before (older), shift+Enter and ↓ to the hit after, Esc closes the box (one
level back: the composer's draft is as it was)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from rewindtui.base.textsafe import sanitize_line
from rewindtui.model.search import MAX_QUERY
from rewindtui.tui import interaction
from rewindtui.tui.keys import forward_if_focus_moved, run_binding_now


class SearchInput(Input):
    """The search's text: Enter, ↑ and ↓ step through the hits, Esc closes (the table's ``search``
    commands), each in the order typed."""

    BINDINGS = interaction.bindings("search")

    async def _on_key(self, event: events.Key) -> None:
        typed = event.is_printable and not event.key.startswith(("alt+", "ctrl+"))
        if forward_if_focus_moved(self, event):  # text typed right after Esc: the composer's
            return
        if not typed and await run_binding_now(self, event):
            return
        await super()._on_key(event)

    def on_mount(self) -> None:
        if self.app.is_headless:
            self.cursor_blink = False  # a steady cursor draws the same every time (snapshots)

    def watch_value(self, value: str) -> None:
        # posted here, as the key is handled, not from Input.Changed (which is queued behind the keys
        # already waiting): a burst of text and Enter is searched, then stepped, in the order typed
        self.post_message(SearchBar.Changed(value))

    def action_step(self, direction: int) -> None:
        self.post_message(SearchBar.Step(direction))

    def action_close(self) -> None:
        bar = self.parent
        if isinstance(bar, SearchBar) and bar.back_to:
            # the focus goes back now, not when the screen has heard of it: keys typed right after
            # Esc are the composer's (forwarded there by keys.forward_if_focus_moved)
            found = self.screen.query(bar.back_to)
            if found:
                self.screen.set_focus(found.first())
        self.post_message(SearchBar.Closed())


class SearchBar(Horizontal):
    DEFAULT_CSS = """
    SearchBar { height: auto; display: none; padding: 0 1; background: $boost; }
    SearchBar.-shown { display: block; }
    SearchBar #search-label { width: auto; padding: 0 1 0 0; }
    SearchBar SearchInput { width: 30; border: none; height: 1; padding: 0 1; }
    SearchBar #search-count { width: 1fr; padding: 0 0 0 1; }
    """

    class Changed(Message):
        """The search's text changed."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Step(Message):
        """Go to the hit before (-1, older) or after (1, newer)."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction

    class Closed(Message):
        """Esc: close the search."""

    def __init__(self, *, back_to: str = "", id: str | None = None) -> None:
        """``back_to``: the selector of the widget that gets the focus back on Esc."""
        super().__init__(id=id)
        self.back_to = back_to

    def compose(self) -> ComposeResult:
        yield Static(Text("Search", style="bold"), id="search-label")
        yield SearchInput(
            placeholder="text in this session",
            max_length=MAX_QUERY,
            id="search-input",
            compact=True,
            select_on_focus=False,
        )
        yield Static(id="search-count")

    @property
    def input(self) -> SearchInput:
        return self.query_one(SearchInput)

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    @property
    def count_text(self) -> str:
        return str(self.query_one("#search-count", Static).render())

    def open(self, text: str | None = None) -> None:
        """Show the box with the cursor in it (``text``: what it searches, else what it had,
        selected)."""
        self.add_class("-shown")
        field = self.input
        if text is not None:
            with self.prevent(Input.Changed, SearchBar.Changed):
                field.value = sanitize_line(text)[:MAX_QUERY]
            field.cursor_position = len(field.value)
        else:
            field.select_all()  # the last search, selected: typing replaces it, → keeps it
        # now, not after the keys already queued (focus() waits its turn): those typed right after
        # ctrl+f are forwarded here by the composer (keys.forward_if_focus_moved)
        self.screen.set_focus(field)

    def close(self) -> None:
        self.remove_class("-shown")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()  # SearchInput says it as SearchBar.Changed

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is a step (the bindings); never a submit that reaches the screen

    def show_count(self, text: str, *, none: bool = False) -> None:
        """What the search found (``none``: nothing, said in bold)."""
        self.query_one("#search-count", Static).update(Text(text, style="bold" if none else ""))

    def keys_hint(self, keymap: dict[str, str] | None = None) -> str:
        """The keys of the box, as the user's keymap has them."""
        older = interaction.keys_of("search.older", keymap)
        newer = interaction.keys_of("search.newer", keymap)
        close = interaction.keys_of("search.close", keymap)
        return f"{older}: older hit · {newer}: newer · {close}: close"
