"""DraftStore.keep: two apps on one data dir keep drafts for the same session; the second one to
keep its draft does not overwrite the first one's, and a sent draft forgets only its own."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rewindtui.chat.drafts import DraftStore


def test_a_second_app_keeping_its_draft_keeps_the_first_ones_too(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.save("srv", "s1", "old")  # kept by an earlier run; both apps start from it
    assert store.keep("srv", "s1", "old, and the first app's", seen="old") == "old, and the first app's"
    kept = store.keep("srv", "s1", "old, and the second app's", seen="old")  # it saw "old" only
    assert kept == "old, and the first app's\nold, and the second app's"
    assert store.load("srv", "s1") == kept


def test_forgetting_a_sent_draft_leaves_another_apps_kept_draft(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.keep("srv", "s1", "kept by the other app", seen="")
    assert store.keep("srv", "s1", "", seen="") == "kept by the other app"  # this app sent its draft
    assert store.load("srv", "s1") == "kept by the other app"
    assert store.keep("srv", "s1", "", seen="kept by the other app") == ""  # its own, seen: forgotten
    assert store.load("srv", "s1") == "" and list(tmp_path.iterdir()) == []


def test_keeping_over_what_was_seen_replaces_it_and_the_stash_stays(tmp_path: Path):
    store = DraftStore(tmp_path)
    store.stash("srv", "s1", "set aside by an edit")
    store.keep("srv", "s1", "typed", seen="")
    assert store.keep("srv", "s1", "typed more", seen="typed") == "typed more"
    assert store.stashed("srv", "s1") == "set aside by an edit"


@given(st.lists(st.text(min_size=1, max_size=8).filter(lambda t: "\n" not in t), min_size=1, max_size=4))
def test_whatever_apps_keep_from_one_start_every_draft_survives(drafts: list[str]):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        store = DraftStore(Path(folder))
        for text in drafts:  # each app saw the file empty when it opened the session
            store.keep("srv", "s1", text, seen="")
        kept = store.load("srv", "s1").split("\n")
        assert all(text in kept for text in drafts)
