"""The banner above the composer: says which mode the screen is in, what will happen, and how
to leave. Rewind mode shows what the rewind would remove and a button to confirm; editing shows
how to resend or cancel; a short hint explains a first Esc."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static

from rewindtui.base.textsafe import sanitize_line

_EXCERPT = 40
#: below this many columns or rows the banner is compact: what goes and the keys, in few lines
COMPACT_WIDTH = 60
COMPACT_HEIGHT = 16


def excerpt(text: str, limit: int = _EXCERPT) -> str:
    line = sanitize_line(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ModeBanner(Horizontal):
    DEFAULT_CSS = """
    ModeBanner { height: auto; display: none; padding: 0 1; background: $warning 25%; }
    ModeBanner.-shown { display: block; }
    ModeBanner.-edit { background: $primary 25%; }
    ModeBanner.-hint { background: $panel; }
    ModeBanner #banner-text { width: 1fr; height: auto; }
    ModeBanner Button { margin: 0 0 0 1; min-width: 8; }
    ModeBanner #banner-confirm { display: none; }
    ModeBanner.-rewind #banner-confirm { display: block; }
    ModeBanner.-hint #banner-cancel { display: none; }
    ModeBanner.-compact { max-height: 4; }
    ModeBanner.-compact #banner-confirm, ModeBanner.-compact #banner-cancel { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._redraw: Callable[[], None] | None = None  # the last show_*, drawn again on a resize

    @property
    def compact(self) -> bool:
        """A small terminal (40×10 must work): the banner keeps to what goes and the keys."""
        size = self.app.size
        return size.width < COMPACT_WIDTH or size.height < COMPACT_HEIGHT

    def on_resize(self, event: events.Resize) -> None:
        compact = self.compact
        if compact != self.has_class("-compact") and self._redraw is not None:
            self._redraw()

    class Confirm(Message):
        """The banner's Rewind button."""

    class Cancel(Message):
        """The banner's Cancel button (leave the mode, nothing changes)."""

    def compose(self) -> ComposeResult:
        yield Static(id="banner-text")
        yield Button(
            "⟲ Rewind",
            id="banner-confirm",
            variant="warning",
            compact=True,
            tooltip="Rewind to before the selected turn (Enter)",
        )
        yield Button("Cancel", id="banner-cancel", compact=True, tooltip="Leave without changing anything (Esc)")

    @property
    def text(self) -> str:
        return str(self.query_one("#banner-text", Static).render())

    def _show(self, kind: str, text: Text) -> None:
        self.set_classes(f"-shown -{kind}" + (" -compact" if self.compact else ""))
        self.query_one("#banner-text", Static).update(text)

    def show_rewind(
        self,
        turns: int,
        messages: int,
        first_text: str,
        *,
        blocked: str = "",
        preview: str = "",
        effects: Sequence[str] = (),
    ) -> None:
        """``preview``: what the rewind does when the server does not rewind in place (the
        chat's words, e.g. kagent 1.0's fork), said instead of "N turns go, on the server too".
        ``effects``: what it cannot undo (``model.effects``), one line each under the rest."""
        self._redraw = lambda: self.show_rewind(
            turns, messages, first_text, blocked=blocked, preview=preview, effects=effects
        )
        if self.compact and not blocked:
            self._show_compact_rewind(turns, first_text, preview=preview, effects=effects)
            return
        text = Text()
        text.append("⟲ Rewind mode", style="bold reverse")
        if blocked:
            text.append(f" {blocked}", style="bold")
        elif preview:
            what = f"“{excerpt(first_text, 30)}”" if first_text else "the selected turn"
            text.append(" back to before ")
            text.append(what, style="bold")
            text.append(f": {sanitize_line(preview)}.")
        else:
            what = f"“{excerpt(first_text, 30)}”" if first_text else "the selected turn"
            text.append(" back to before ")
            text.append(what, style="bold")
            text.append(
                f": {turns} turn{'s' if turns != 1 else ''} ({messages} message{'s' if messages != 1 else ''}) go, on "
                "the server too."
            )
        text.append(" Enter rewinds, Esc leaves.", style="italic")
        for line in effects:
            text.append(f"\n⚠ {line}.", style="bold")
        self._confirm_label("⟲ Rewind", "Rewind to before the selected turn (Enter)")
        self._show("rewind", text)

    def _show_compact_rewind(
        self, turns: int, first_text: str, *, preview: str = "", effects: Sequence[str] = ()
    ) -> None:
        """The rewind banner on a small terminal: the keys first, then what goes."""
        text = Text()
        text.append("⟲ Enter rewinds, Esc leaves.", style="bold reverse")
        what = f"“{excerpt(first_text, 16)}”" if first_text else "the selected turn"
        text.append(" Back to before ")
        text.append(what, style="bold")
        if preview:
            text.append(f": {sanitize_line(preview)}.")
        else:
            text.append(f": {turns} turn{'s go' if turns != 1 else ' goes'}, on the server too.")
        if effects:
            count = len(effects)
            text.append(f"\n⚠ {count} tool call{'s' if count != 1 else ''} it cannot undo.", style="bold")
        self._confirm_label("⟲ Rewind", "Rewind to before the selected turn (Enter)")
        self._show("rewind", text)

    def show_rewound(self, first_text: str, *, restore: str, fork: str, leave: str = "Esc") -> None:
        """The chooser on a rewound turn shown in place (F4): not a rewind point but a rewound
        branch. ``restore`` / ``fork``: the keys that do it, or why not (from the chat's gate)."""
        self._redraw = lambda: self.show_rewound(first_text, restore=restore, fork=fork, leave=leave)
        text = Text()
        text.append("⟲ Rewound branch", style="bold reverse")
        what = f"“{excerpt(first_text, 30)}”" if first_text else "this turn"
        text.append(" ")
        text.append(what, style="bold")
        text.append(" (not in the conversation): ")
        text.append(f"{restore}; {fork}.", style="italic")
        text.append(f" {leave} leaves.", style="italic")
        self._confirm_label("⟲ Restore", "Bring this rewound branch back up to this turn (Enter)")
        self._show("rewind", text)

    def _confirm_label(self, label: str, tooltip: str) -> None:
        button = self.query_one("#banner-confirm", Button)
        if str(button.label) != label:
            button.label = label
            button.refresh(layout=True)
        button.tooltip = tooltip

    def show_edit(self, first_text: str, turns: int) -> None:
        self._redraw = lambda: self.show_edit(first_text, turns)
        text = Text()
        text.append("✎ Editing", style="bold reverse")
        later = turns - 1
        after = f" and {later} later turn{'s' if later != 1 else ''}" if later > 0 else ""
        text.append(f" “{excerpt(first_text, 30)}”{after} set aside; sending replaces {'them' if later > 0 else 'it'}.")
        text.append(" Enter resends, Esc cancels.", style="italic")
        self._show("edit", text)

    def show_hint(self, hint: str) -> None:
        self._redraw = lambda: self.show_hint(hint)
        self._show("hint", Text(hint, style="italic"))

    def hide(self) -> None:
        self._redraw = None
        self.set_classes("")

    @property
    def kind(self) -> str:
        for kind in ("rewind", "edit", "hint"):
            if self.has_class(f"-{kind}"):
                return kind
        return ""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "banner-confirm":
            self.post_message(self.Confirm())
        else:
            self.post_message(self.Cancel())
