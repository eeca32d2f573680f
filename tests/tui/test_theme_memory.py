"""The theme picked in the app is saved in the config file (the rest of the file kept), and the
next start uses it."""

from __future__ import annotations

import pytest

from kit.offline import offline_app, offline_chat
from kit.pilot import wait_until
from rewindtui.config.remember import remember
from rewindtui.config.settings import load_settings
from rewindtui.config.values import SettingsError
from rewindtui.tui import theme_memory

FILE = """# mine
url = "http://127.0.0.1:1/"   # kept
theme = "textual-dark"

[headers]
X-Team = "a"
"""


def test_remember_replaces_or_adds_the_line_and_keeps_the_rest(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(FILE)
    remember(path, "theme", "nord")
    assert path.read_text() == FILE.replace('theme = "textual-dark"', 'theme = "nord"')
    path.write_text('[headers]\nX = "y"\n')
    remember(path, "theme", "gruvbox")
    assert path.read_text() == 'theme = "gruvbox"\n[headers]\nX = "y"\n'
    empty = tmp_path / "new" / "config.toml"
    remember(empty, "theme", "nord")
    assert empty.read_text() == 'theme = "nord"\n'
    odd = tmp_path / "odd.toml"
    odd.write_text('theme = """\nx"""\n')  # not one plain line: left alone
    with pytest.raises(SettingsError):
        remember(odd, "theme", "nord")
    assert odd.read_text() == 'theme = """\nx"""\n'


async def test_a_theme_picked_in_the_app_is_the_next_starts_theme(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(FILE)
    app = offline_app(offline_chat([]))
    theme_memory.configure(app, load_settings({"config": str(path)}, env={}))
    async with app.run_test() as pilot:
        app.theme = "nord"  # what the palette's "Change theme" sets
        await wait_until(pilot, lambda: 'theme = "nord"' in path.read_text())
    assert load_settings({"config": str(path)}, env={}).theme == "nord"
    assert "X-Team" in path.read_text() and "# kept" in path.read_text()
