"""Keys handled in the order they were typed.

Textual runs a non-priority binding only after the key has bubbled from the focused widget up to
the app, and a priority binding before the focused widget has seen the keys queued ahead of it.
Either way a burst of keys (a paste without bracketed paste, ssh, ``tmux send-keys``, typing
during a stall) can be acted on out of order: Enter sends before the last characters are in the
draft, a command key acts on a state that the keys before it were about to change.

:func:`run_binding_now` runs the binding a key would trigger right away, from the focused
widget's own key handler, so each key acts on the state left by the keys before it. It honours
the user's keymap and each binding's ``check_action`` (it reads the screen's active bindings).
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget


async def run_binding_now(widget: Widget, event: events.Key) -> bool:
    """Run the enabled, non-priority binding for ``event.key`` (from ``widget`` up); True if one ran."""
    active = widget.screen.active_bindings.get(event.key)
    if active is None or not active.enabled or active.binding.priority:
        return False
    if active.node not in widget.ancestors_with_self:
        return False  # focus moved on while this key was queued: not this widget's binding
    event.stop()
    event.prevent_default()
    await widget.app.run_action(active.binding.action, active.node)
    return True


def forward_if_focus_moved(widget: Widget, event: events.Key) -> bool:
    """A key queued for ``widget`` before the focus moved on to another text field (ctrl+f opening
    the search box, Esc closing it, with the keys after it in the same read): it goes where the
    user now types, after the keys forwarded before it. True if it was forwarded."""
    from textual.widgets import Input, TextArea

    focused = widget.screen.focused
    if focused is None or focused is widget or not isinstance(focused, (Input, TextArea)):
        return False
    event.stop()
    event.prevent_default()
    focused.post_message(events.Key(event.key, event.character))
    return True
