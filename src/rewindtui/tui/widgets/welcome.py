"""A short welcome on an empty session: what to type, where help is, what ``/`` does."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from rewindtui.tui import interaction


def welcome_text(agent: str, keymap: Mapping[str, str] | None = None) -> Text:
    text = Text()
    text.append("Welcome", style="bold")
    text.append(f" — this session with {agent} is empty.\n" if agent else " — this session is empty.\n")
    text.append("• Type a message below and press Enter to send it.\n")
    text.append("• Type / for commands (/rewind, /undo, /sessions, /help …); Tab completes.\n")
    help_keys = interaction.keys_of("chat.help", keymap)
    sessions_keys = interaction.keys_of("chat.sessions", keymap)
    rewind_keys = interaction.keys_of("chat.rewind_mode", keymap)
    text.append(f"• {help_keys}: keys and how rewind works · {sessions_keys}: your sessions · ")
    text.append(f"{rewind_keys}: choose a turn to go back to (nothing changes until Enter).")
    return text


class Welcome(Static):
    DEFAULT_CSS = """
    /* at most half the screen: in a small terminal (60x15) its wrapped text pushed the composer
       off the screen; what does not fit is cut, the composer and the footer stay */
    Welcome {
        height: auto; max-height: 50%; overflow: hidden hidden; display: none;
        margin: 1 2; padding: 1 2; border: round $primary 50%;
    }
    Welcome.-cramped { margin: 0 1; padding: 0 1; }
    Welcome.-shown { display: block; }
    """

    #: below this many rows the welcome drops its blank lines (at 40x10 they alone took the room)
    CRAMPED_ROWS = 24

    def fit(self, rows: int) -> None:
        """The screen is ``rows`` tall now."""
        self.set_class(rows < self.CRAMPED_ROWS, "-cramped")

    def show_for(self, empty: bool, agent: str = "", keymap: Mapping[str, str] | None = None) -> None:
        if empty:
            self.update(welcome_text(agent, keymap))
        self.set_class(empty, "-shown")
