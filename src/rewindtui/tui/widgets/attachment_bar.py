"""The attachments waiting to go with the next message, shown above the composer.

One chip per attachment (``name · type · size [✕]``); a click on ``✕`` removes it. When the bar
has focus, ←/→ choose a chip and Delete / Backspace removes it. Hidden when empty. The bar holds
the list; the screen takes it when it sends (:meth:`take`) and gives it back if the send failed
(:meth:`restore`), so a failed send loses no attachment.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from rewindtui.a2a.parts import human_size
from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.attachments import Attachment, inline_bytes

_REMOVE = "rt_remove"


class AttachmentBar(Static, can_focus=True):
    BINDINGS = [
        Binding("left", "move(-1)", "Previous", show=False, id="attachments.previous", tooltip="The attachment before"),
        Binding("right", "move(1)", "Next", show=False, id="attachments.next", tooltip="The attachment after"),
        Binding(
            "delete,backspace", "remove", "Remove", id="attachments.remove", tooltip="Remove the selected attachment"
        ),
    ]

    DEFAULT_CSS = """
    AttachmentBar { height: auto; padding: 0 1; color: $text-muted; background: $boost; }
    AttachmentBar:focus { background: $accent 20%; }
    AttachmentBar.-empty { display: none; }
    """

    class Changed(Message):
        """The attachments changed (the composer may send with no text when there are some)."""

        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.attachments: list[Attachment] = []
        self.selected = 0
        self.add_class("-empty")

    def add(self, attachment: Attachment) -> None:
        self.attachments.append(attachment)
        self.selected = len(self.attachments) - 1
        self._changed()

    def remove_at(self, index: int) -> Attachment | None:
        if not 0 <= index < len(self.attachments):
            return None
        gone = self.attachments.pop(index)
        self.selected = max(0, min(self.selected, len(self.attachments) - 1))
        self._changed()
        return gone

    def clear(self) -> None:
        self.attachments = []
        self.selected = 0
        self._changed()

    def take(self) -> list[Attachment]:
        """The attachments, for a send; the bar is empty after."""
        taken = list(self.attachments)
        self.clear()
        return taken

    def restore(self, attachments: Sequence[Attachment]) -> None:
        """Put attachments of a send that failed back, before any added since."""
        self.attachments = [*attachments, *self.attachments]
        self._changed()

    def _changed(self) -> None:
        self.set_class(not self.attachments, "-empty")
        self.update(self._render_chips())
        if not self.attachments and self.has_focus:
            self.screen.focus_next()
        self.post_message(self.Changed(len(self.attachments)))

    def _render_chips(self) -> Text:
        text = Text(no_wrap=False)
        if not self.attachments:
            return text
        total = inline_bytes(self.attachments)
        text.append(
            f"{len(self.attachments)} attached" + (f" ({human_size(total)})" if total else "") + ": ", style="bold"
        )
        for index, attachment in enumerate(self.attachments):
            chip = Style(reverse=index == self.selected and self.has_focus)
            text.append(sanitize_line(attachment.label()), style=chip)
            text.append(" ")
            text.append("[✕]", style=Style(bold=True) + Style.from_meta({_REMOVE: index}))
            text.append("  ")
        return text

    def on_focus(self) -> None:
        self.update(self._render_chips())

    def on_blur(self) -> None:
        self.update(self._render_chips())

    def on_click(self, event: events.Click) -> None:
        index = event.style.meta.get(_REMOVE) if event.style else None
        if isinstance(index, int):
            event.stop()
            self.remove_at(index)

    def action_move(self, step: int) -> None:
        if self.attachments:
            self.selected = (self.selected + step) % len(self.attachments)
            self.update(self._render_chips())

    def action_remove(self) -> None:
        if self.remove_at(self.selected) is None:
            self.app.bell()
