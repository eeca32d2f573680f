"""The command palette's entries for the chat screen, made from the interaction table (as posting's
``commands.py`` does): each entry shows the keys the user's keymap gives it, never a typed hint."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from rewindtui.tui import interaction


class ChatCommands(Provider):
    def _entries(self) -> list[tuple[str, str, interaction.Command]]:
        keymap = getattr(self.app, "keymap_overrides", None)
        offers = getattr(self.screen, "offers", None)  # the chat screen: only what the gate allows now
        entries = []
        for command in interaction.COMMANDS:
            if not command.palette or (offers is not None and not offers(command)):
                continue
            keys = interaction.keys_of(command.id, keymap)
            shown = " · ".join(x for x in (keys, f"/{command.slash}" if command.slash else "") if x)
            entries.append((command.title.rstrip("…"), f"{command.help} ({shown})" if shown else command.help, command))
        return entries

    def _run(self, command: interaction.Command) -> None:
        from rewindtui.tui.screens.chat import ChatScreen

        screen = self.screen
        if isinstance(screen, ChatScreen):
            screen.slash.run_command(command)

    async def discover(self) -> Hits:
        for title, text, command in self._entries():
            yield DiscoveryHit(title, partial(self._run, command), help=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, text, command in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, command), help=text)
