"""The footer with the quit key first: Textual's footer lists the focused widget's keys, then the
screen's, then the app's, and cuts what does not fit at the right, so ctrl+q (the app's) went
first at narrow widths. Here the app's quit key leads, whatever the width.

It is also recomposed less often than Textual's, which builds its keys again on every change of
the bindings, one rebuild queued per change: a screen's start changes them several times in a row
(the screen mounted, the composer focused, the connect's keys). Here the changes queued before a
rebuild make one rebuild, from the bindings as they are when it runs, and a rebuild that would show
the keys already shown is skipped (a rebuild mounts and styles every key: the launch's CPU); a key
is built with the footer's ``compact`` already set instead of being restyled twice to get it.

A key's widget may say what its key does now (``footer_label(action)``): the composer's Enter is
"Resend" while a turn is edited, where the binding says "Send".

Keys that do not fit whole are not shown: Textual's footer cuts the last key that overflows
mid-word ("esc Sto"); here the keys after the last whole one are hidden until the footer is wide
enough again (the palette key, docked at the right, always shows)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.screen import Screen

#: the footer keys that lead (their Textual action names)
FIRST = ("quit",)


def leading(widgets: list[Widget]) -> list[Widget]:
    """``widgets`` with the footer keys of :data:`FIRST` moved to the front, in their order."""
    first = [w for w in widgets if getattr(w, "action", None) in FIRST]
    return first + [w for w in widgets if w not in first]


class KeyFooter(Footer):
    #: a rebuild is queued (the changes of the bindings until it runs make no other)
    _rebuild_queued = False
    #: what the keys shown were built from (:meth:`_shown_from`); None: not built yet
    _built_from: Any = None

    def compose(self) -> ComposeResult:
        self._built_from = self._shown_from() if self._bindings_ready else None
        keys = leading(list(super().compose()))
        labels = self._built_from[1] if self._built_from is not None else {}  # (_shown_from's labels)
        for key in keys:
            if isinstance(key, FooterKey) and key.action in labels:
                key.description = labels[key.action]
            if isinstance(key, FooterKey) and "compact" in (key._reactive_connect or {}):
                # bound to the footer's ``compact``: start with its value. A key starts compact
                # (``FooterKey.compact``'s default), and the binding then sets it back: each of
                # the two a restyle of the key, on every rebuild; the key ends up the same
                key.set_reactive(FooterKey.compact, self.compact)
                key.set_class(self.compact, "-compact", update=False)
        yield from keys
        self.call_after_refresh(self.fit)

    def on_resize(self, event: events.Resize) -> None:
        self.fit()

    def fit(self) -> None:
        """Show the keys that fit whole, in order, beside the palette key; hide the rest."""
        if not self.is_attached or not self.size.width:
            return
        container, viewport = self.size, self.app.size
        keys = [child for child in self.children if not child.has_class("-command-palette")]
        room = self.size.width - sum(
            _width(child, container, viewport) for child in self.children if child.has_class("-command-palette")
        )
        used = 0
        for key in keys:
            width = _width(key, container, viewport)
            fits = used + width - key.styles.margin.right <= room  # its own right margin may overflow
            used += width
            if key.display != fits:
                key.display = fits

    def bindings_changed(self, screen: Screen) -> None:
        """As Textual's ``Footer.bindings_changed``, but one rebuild for the changes made before it runs."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_queued:
            self._rebuild_queued = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_queued = False
        if self._built_from is not None and self._built_from == self._shown_from():
            return  # the same keys as shown
        await self.recompose()

    def _shown_from(self) -> tuple[object, ...]:
        """Everything ``Footer.compose`` builds the keys from (textual 8.2's ``_footer.py``): the
        active bindings (the palette's among them), each with its key, how the key is shown, its
        text, action, group, whether it is shown and enabled, its tooltip; the palette and grouping
        switches."""
        app = self.app
        keys = tuple(
            (
                key,
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                binding.group,
                binding.tooltip,
                binding.show,
                enabled,
                tooltip,
            )
            for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )
        return (
            keys,
            self._labels(),
            self.show_command_palette,
            app.ENABLE_COMMAND_PALETTE,
            self.compact,
            self.combine_groups,
        )

    def _labels(self) -> dict[str, str]:
        """What the widgets of the active bindings say their keys do now, where that is not the
        binding's description: ``node.footer_label(action)``, by action."""
        labels: dict[str, str] = {}
        for node, binding, _enabled, _tooltip in self.screen.active_bindings.values():
            label = getattr(node, "footer_label", None)
            text = label(binding.action) if callable(label) else None
            if text:
                labels[binding.action] = text
        return labels


def _width(widget: Widget, container: Any, viewport: Any) -> int:
    """The cells ``widget`` takes in a row, shown or not: its content, padding, border and margins."""
    styles = widget.styles
    return widget.get_content_width(container, viewport) + styles.gutter.width + styles.margin.width
