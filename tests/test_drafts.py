"""DraftStore: drafts per (server, session) across restarts, and the stash an edit uses."""

from __future__ import annotations

from pathlib import Path

from rewindtui.base.dirs import default_data_dir
from rewindtui.chat.drafts import Draft, DraftStore, default_drafts_dir


def test_a_draft_survives_a_restart_per_server_and_session(tmp_path: Path):
    store = DraftStore(tmp_path / "drafts")
    store.save("http://a", "s1", "half a thought")
    store.save("http://a", "s2", "another")
    store.save("http://b", "s1", "elsewhere")
    again = DraftStore(tmp_path / "drafts")  # a new process
    assert again.load("http://a", "s1") == "half a thought"
    assert again.load("http://a", "s2") == "another"
    assert again.load("http://b", "s1") == "elsewhere"
    assert again.load("http://a", "s3") == ""


def test_an_empty_draft_forgets_and_leaves_no_file(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.save("srv", "s1", "x")
    assert len(list(tmp_path.iterdir())) == 1
    store.save("srv", "s1", "")
    assert store.load("srv", "s1") == "" and list(tmp_path.iterdir()) == []


def test_the_stash_keeps_the_draft_while_an_edit_borrows_the_composer(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.save("srv", "s1", "my draft")
    store.stash("srv", "s1", "my draft")  # an edit starts: the composer now holds the turn's text
    assert store.load("srv", "s1") == "" and store.stashed("srv", "s1") == "my draft"
    assert DraftStore(tmp_path).stashed("srv", "s1") == "my draft"  # a crash mid-edit keeps it
    store.stash("srv", "s1", "typed during the edit")  # a second stash keeps both, oldest first
    assert store.unstash("srv", "s1") == "my draft\ntyped during the edit"
    assert store.stashed("srv", "s1") == "" and store.get("srv", "s1") == Draft()


def test_a_new_sessions_draft_follows_it_when_it_gets_an_id(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.save("srv", None, "first words")
    store.move("srv", None, "new-id")
    assert store.load("srv", "new-id") == "first words" and store.load("srv", None) == ""


def test_a_damaged_file_is_an_empty_draft(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.save("srv", "s1", "x")
    (path,) = tmp_path.iterdir()
    path.write_text("{not json")
    assert store.get("srv", "s1") == Draft()
    path.write_text('["a list"]')
    assert store.load("srv", "s1") == ""


def test_drafts_live_under_the_user_data_dir():
    assert default_drafts_dir() == default_data_dir() / "drafts"
    assert DraftStore().directory == default_drafts_dir()
