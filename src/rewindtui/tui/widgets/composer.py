"""The composer: a multi-line TextArea where Enter sends and ctrl+j / shift+enter add a newline.

Every key is handled in the order it was typed (see :mod:`rewindtui.tui.keys`): with text and
Enter arriving in one burst, Enter sends the whole text. ↑ on an empty composer recalls the
session's earlier prompts (↓ goes forward again, back to the draft); pasted text arrives without
terminal escape sequences or control characters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from rewindtui.base.textsafe import sanitize_line, strip_controls
from rewindtui.chat.prompt_history import PromptHistory
from rewindtui.tui import interaction
from rewindtui.tui.keys import forward_if_focus_moved, run_binding_now

if TYPE_CHECKING:
    from rewindtui.tui.widgets.slash_menu import SlashMenu

PLACEHOLDER = "Message the agent — Enter sends, / commands, F1 help"


class Composer(TextArea):
    BINDINGS = [
        *interaction.bindings("composer"),
        # ctrl+c is the screen's (clear / stop / quit), not the TextArea's copy
        *interaction.bindings("screen", only=("chat.interrupt",), namespace="screen"),
    ]

    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 10; }
    Composer.-read-only { border: tall $warning; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class PageRequested(Message):
        """PgUp / PgDn in the composer: the conversation scrolls (the screen does it)."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction

    class EndOfInput(Message):
        """ctrl+d on an empty composer (the screen quits)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        #: texts submitted (Enter) whose message the screen has not handled yet: the composer is
        #: empty, but the text is not sent yet either (ctrl+c waits for it: rewindtui.tui.interrupt_key)
        self.submitting = 0
        #: a turn is being edited: Enter resends it (the footer says "Resend")
        self.editing = False
        self.placeholder = PLACEHOLDER
        #: why typing is disabled ("" : it is not), see read_only_because
        self.refused = ""
        self.prompts = PromptHistory()
        #: files or data wait to be sent: Enter sends even with no text
        self.attachments_pending = False
        #: ↑ on an empty composer takes back the last queued message first (None: no queue here)
        self.take_queued: Callable[[], str | None] | None = None
        #: the slash menu this composer drives (↑/↓/Tab/Enter/Esc while it lists commands)
        self.menu: SlashMenu | None = None

    def update_menu(self, keymap: Mapping[str, str] | None = None) -> None:
        """The text changed: the slash menu shows what fits it."""
        if self.menu is not None:
            self.menu.show_text(self.text, keymap)

    def _menu_key(self, key: str) -> bool:
        """↑/↓ move the slash menu's highlight, Tab or Enter take it (Enter on a command typed
        whole runs it), Esc closes the menu. True if the key was the menu's."""
        menu = self.menu
        if menu is None:
            return False
        # keys typed in one burst reach here before the text's Changed events: the menu follows the
        # text as typed now, so Enter never takes the highlight of an older text
        if menu.completion.text != self.text:
            menu.show_text(self.text, menu.keymap)
        if not menu.completion.shown:
            return False
        completion = menu.completion
        if key == "escape":
            menu.close()
            return True
        if not completion.picking:
            return False
        if key in ("up", "down"):
            menu.move(-1 if key == "up" else 1)
            return True
        if key == "tab" or (key == "enter" and not completion.complete_name()):
            taken = completion.taken()
            if taken is not None:
                self.set_draft(taken)
                return True
        return False

    def read_only_because(self, reason: str) -> None:
        """Disable typing with ``reason`` shown in its place ("" enables it again): a session that
        may be read, not written to (the chat's permissions say so and why)."""
        if reason == self.refused:
            return
        self.refused = reason
        self.read_only = bool(reason)
        self.set_class(bool(reason), "-read-only")
        self.placeholder = f"Read-only: {sanitize_line(reason)}" if reason else PLACEHOLDER
        self.tooltip = reason or None
        self.refresh_bindings()  # the footer stops offering Enter to send

    def on_mount(self) -> None:
        # headless (tests, screenshots) nobody sees a blink; a steady cursor draws the same every time
        if self.app.is_headless:
            self.cursor_blink = False

    async def _on_key(self, event: events.Key) -> None:
        # bindings (Enter, the screen's Esc, alt+y, ...) run here, after the keys typed before them.
        # A terminal's alt+letter carries its letter as a printable character: a binding first.
        typed = event.is_printable and not event.key.startswith(("alt+", "ctrl+"))
        if forward_if_focus_moved(self, event):  # e.g. text typed right after ctrl+f: the search's
            return
        if not typed and self._menu_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if not typed and await run_binding_now(self, event):
            return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        # a paste may carry terminal escape sequences (colours copied from a terminal, titles):
        # insert the text without them
        event.prevent_default()
        event.stop()
        if self.read_only:
            return
        if result := self._replace_via_keyboard(strip_controls(event.text), *self.selection):
            self.move_cursor(result.end_location)
            self.focus()

    def action_submit(self) -> None:
        # Empty the composer now, before the keys queued behind this Enter are inserted: they
        # begin the next message. The screen puts the text back if it does not send it.
        text = self.text
        if text.strip() or self.attachments_pending:
            self.clear_draft()
            self.history.clear()  # ctrl+z never puts a sent message back (a refused one is put back)
            self.submitting += 1  # until the screen takes it (:meth:`taken`): a key behind it waits
            self.post_message(self.Submitted(text))

    def taken(self) -> None:
        """The screen has taken a :class:`Submitted` text (sent, queued, run or put back)."""
        self.submitting = max(0, self.submitting - 1)

    def editing_turn(self, editing: bool) -> None:
        """A turn is being edited (Enter resends it in the turn's place) or no longer is: the
        footer's Enter says so (:meth:`footer_label`)."""
        if editing != self.editing:
            self.editing = editing
            self.refresh_bindings()

    def footer_label(self, action: str) -> str | None:
        """What the footer shows for ``action`` now, where the binding's description is not it."""
        return "Resend" if action == "submit" and self.editing else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "complete":
            return self.slash_prefix() is not None  # else Tab moves focus as usual
        if action == "submit":
            return not self.refused  # a read-only session: nothing to send (the placeholder says why)
        return True

    def slash_prefix(self) -> str | None:
        """The command name being typed (``/re`` → ``re``), or None when the text is no command."""
        text = self.text
        if not text.startswith("/") or text.startswith("//") or any(c.isspace() for c in text):
            return None
        return text[1:]

    def action_complete(self) -> None:
        """Tab: the slash command highlighted in the menu; without a menu, complete the name being
        typed (to the common part of the matches)."""
        prefix = self.slash_prefix()
        if prefix is None:
            return
        if self.menu is not None:
            self.menu.show_text(self.text, self.menu.keymap)
            taken = self.menu.completion.taken()
            if taken is not None:
                self.set_draft(taken)
                return
        names = [c.slash for c in interaction.slash_matches(prefix)]
        if not names:
            self.app.bell()
            return
        common = names[0]
        for name in names[1:]:
            while not name.startswith(common):
                common = common[:-1]
        self.set_draft(f"/{common}" + (" " if len(names) == 1 else ""))

    def action_end_of_input(self) -> None:
        """ctrl+d: on an empty composer the screen quits; else delete the character after the cursor."""
        if self.text:
            self.action_delete_right()
            return
        self.post_message(self.EndOfInput())

    def action_newline(self) -> None:
        self.insert("\n")

    def action_page(self, direction: int) -> None:
        self.post_message(self.PageRequested(direction))

    def action_history(self, step: int) -> None:
        """↑ / ↓: browse earlier prompts when the composer is empty or shows a recalled prompt
        unchanged; otherwise move the cursor as usual."""
        text = self.text
        recalling = not text or self.prompts.showing(text)
        row = self.cursor_location[0]
        at_edge = row == 0 if step < 0 else row == self.document.line_count - 1
        if not (recalling and at_edge):
            self.action_cursor_up() if step < 0 else self.action_cursor_down()
            return
        if step < 0 and not text and self.take_queued is not None:
            queued = self.take_queued()
            if queued is not None:
                self.set_draft(queued)
                return
        recalled = self.prompts.older(text) if step < 0 else self.prompts.newer()
        if recalled is None:
            if step < 0 and not self.prompts.prompts:
                self.notify("No earlier prompts in this session yet. alt+↑ chooses a turn to rewind to.", timeout=3)
            return
        self.set_draft(recalled)

    def set_draft(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def clear_draft(self) -> str:
        """Empty the composer as an edit (ctrl+z brings the text back); returns what was there."""
        text = self.text
        self.prompts.reset()
        self.clear()
        return text
