"""The footer with the quit key first: Textual's footer lists the focused widget's keys, then the
screen's, then the app's, and cuts what does not fit at the right, so ctrl+q (the app's) went
first at narrow widths. Here the app's quit key leads, whatever the width.

It is also rebuilt only when what it shows changes. Textual's footer recomposes on every
``refresh_bindings`` (a focus change, any state that may enable or disable a key), building a
``FooterKey`` per key and styling each anew; most of those calls show the same keys as before (a
Pilot test module spent about a sixth of its CPU there)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

#: the footer keys that lead (their Textual action names)
FIRST = ("quit",)


def leading(widgets: list[Widget]) -> list[Widget]:
    """``widgets`` with the footer keys of :data:`FIRST` moved to the front, in their order."""
    first = [w for w in widgets if getattr(w, "action", None) in FIRST]
    return first + [w for w in widgets if w not in first]


class KeyFooter(Footer):
    #: what the footer showed when it was last composed (None: not composed with keys yet)
    shown: tuple[Any, ...] | None = None

    def keys_shown(self) -> tuple[Any, ...]:
        """Everything Textual's ``Footer.compose`` reads: the screen's active bindings, how each key
        is displayed, and the command palette's key."""
        app = self.app
        return (
            self.show_command_palette,
            app.ENABLE_COMMAND_PALETTE,
            tuple(
                (key, binding, app.get_key_display(binding), enabled, tooltip)
                for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
            ),
        )

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self.shown is not None and self.is_attached and screen is self.screen and self.keys_shown() == self.shown:
            return  # the same keys: nothing to rebuild
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        if keys:
            self.shown = self.keys_shown()
        yield from leading(keys)
