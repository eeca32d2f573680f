"""The composer: a multi-line TextArea where Enter sends and ctrl+j / shift+enter add a newline."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Composer(TextArea):
    BINDINGS = [
        Binding("enter", "submit", "Send", priority=True, id="composer.send", tooltip="Send the message"),
        Binding("ctrl+j,shift+enter", "newline", "Newline", show=False, id="composer.newline", tooltip="Insert a newline"),
        Binding("up", "history_up", "Messages", show=False, id="composer.to_messages", tooltip="From an empty composer: select the last message"),
    ]

    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 10; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ToMessages(Message):
        """Up from an empty composer: move to the message cursor."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.placeholder = "Message the agent — Enter sends, ctrl+j newline, F1 help"

    def action_submit(self) -> None:
        text = self.text
        if text.strip():
            self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_history_up(self) -> None:
        if not self.text:
            self.post_message(self.ToMessages())
        else:
            self.action_cursor_up()

    def set_draft(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        await super()._on_key(event)
