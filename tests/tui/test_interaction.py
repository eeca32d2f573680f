"""The interaction table (no Textual needed): docs/keys.md is its rendering, and the rules it
states hold in the table itself."""

from __future__ import annotations

from pathlib import Path

from rewindtui.tui import interaction, slash

ROOT = Path(__file__).resolve().parents[2]


def test_docs_keys_md_is_the_rendered_table():
    assert (ROOT / "docs" / "keys.md").read_text(encoding="utf-8") == interaction.render_markdown(), (
        "docs/keys.md is stale: run `python -m rewindtui.tui.interaction docs/keys.md`"
    )


def test_no_printable_key_is_a_command_outside_lists_the_user_opened():
    for command in interaction.COMMANDS:
        if command.owner in ("sessions", "picker"):
            continue  # a focused list the user opened: its letters are shown on screen
        for key in filter(None, command.keys.split(",")):
            assert len(key) > 1, f"{command.id} binds the printable key {key!r}"


def test_every_mode_row_names_a_command_or_a_literal_and_ids_are_unique():
    ids = [c.id for c in interaction.COMMANDS]
    assert len(ids) == len(set(ids))
    for rows in interaction.MODES.values():
        for ref, _what in rows:
            assert ref.startswith('"') or ref in interaction.BY_ID
    assert set(interaction.MODES) == set(interaction.Mode)


def test_shown_keys_follow_the_keymap():
    assert interaction.keys_of("chat.rewind_mode") == "alt+↑"
    assert interaction.keys_of("chat.rewind_mode", {"chat.rewind_mode": "ctrl+b,f9"}) == "ctrl+b / F9"
    assert "ctrl+b" in interaction.render_markdown({"chat.rewind_mode": "ctrl+b"})


def test_slash_parsing_literal_and_completion():
    assert slash.parse("/rewind 2") == ("rewind", "2")
    assert slash.parse("//etc/hosts") is None and slash.literal("//etc/hosts") == "/etc/hosts"
    assert slash.parse("hello /x") is None
    assert [c.slash for c in interaction.slash_matches("re")] == ["rewind", "redo", "retry", "rename"]
    expected = {
        "rewind",
        "undo",
        "redo",
        "edit",
        "fork",
        "new",
        "sessions",
        "rename",
        "export",
        "copy",
        "attach",
        "save",
        "card",
        "stop",
        "help",
    }
    assert expected <= set(interaction.SLASH)


class _Host:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def run_command(self, command):
        self.calls.append(("run", command.id))

    def preview_turn(self, number):
        self.calls.append(("preview", number))
        return True

    def act_on_turn(self, action, number):
        self.calls.append((action, number))
        return True

    def export_transcript(self, fmt):
        self.calls.append(("export", fmt))

    def say(self, text, *, warning=False):
        self.calls.append(("say", text))


def test_slash_run_dispatches_and_refuses_unknown_or_partial_names():
    host = _Host()
    assert slash.run(host, "/rewind 3") and host.calls[-1] == ("preview", 3)
    assert slash.run(host, "/rewind") and host.calls[-1] == ("preview", -1)  # no number: the last turn
    assert slash.run(host, "/fork -2") and host.calls[-1] == ("fork", -2)
    assert slash.run(host, "/edit") and host.calls[-1] == ("edit", None)  # the selected turn, else the last
    assert slash.run(host, "/export json") and host.calls[-1] == ("export", "json")
    assert slash.run(host, "/undo") and host.calls[-1] == ("run", "chat.undo_rewind")
    assert not slash.run(host, "/n")  # a partial name never runs (no stray new session)
    assert host.calls[-1][0] == "say" and "/n" in host.calls[-1][1]
    assert not slash.run(host, "/rewind two") and "number" in host.calls[-1][1]
    assert not slash.run(host, "/rewind 0") and "no turn 0" in host.calls[-1][1]


def _turns(count: int) -> list:
    from rewindtui.model import Item, ItemKind

    items = []
    for n in range(1, count + 1):
        items.append(Item(ItemKind.MESSAGE, f"u{n}", role="user", invocation_id=f"e-{n}", text=f"turn {n}"))
        items.append(Item(ItemKind.MESSAGE, f"a{n}", role="agent", invocation_id=f"e-{n}", text=f"reply {n}"))
    return items


def test_slash_numbers_count_from_the_start_and_negative_ones_from_the_end():
    items = _turns(4)
    previewed: list[int] = []
    acted: list[tuple[str, str]] = []
    said: list[str] = []
    actions = slash.SlashActions(
        items=lambda: items,
        selected=lambda: None,
        preview=previewed.append,
        act=lambda action, item: acted.append((action, item.text)),
        run_action=lambda action: None,
        can_undo=lambda: False,
        why_not_undo=lambda: "",
        export=lambda fmt: None,
        notify=lambda text, warning: said.append(text),
    )
    assert slash.run(actions, "/rewind 2") and items[previewed[-1]].text == "turn 2"
    assert slash.run(actions, "/rewind -1") and items[previewed[-1]].text == "turn 4"
    assert slash.run(actions, "/rewind") and items[previewed[-1]].text == "turn 4"
    assert slash.run(actions, "/edit 1") and acted[-1] == ("edit", "turn 1")
    assert slash.run(actions, "/fork -3") and acted[-1] == ("fork", "turn 2")
    assert not slash.run(actions, "/rewind 5")  # no such turn: refused, the draft is kept
    assert "turns 1 to 4" in said[-1] and len(previewed) == 3
    loading = [True]
    actions.loading_older = lambda: loading[0]  # the session's older turns are still being loaded
    assert not slash.run(actions, "/rewind 1") and "still loading" in said[-1]
    assert slash.run(actions, "/rewind -1") and items[previewed[-1]].text == "turn 4"  # from the end: known
