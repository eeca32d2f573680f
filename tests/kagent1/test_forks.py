"""The fork records (rewindtui.kagent1.forks): one JSON file, the user's only, per controller."""

from __future__ import annotations

from rewindtui.kagent1 import forks
from rewindtui.kagent1.forks import ForkStore, new_record


def test_records_are_kept_per_controller_and_popped_once(tmp_path):
    path = tmp_path / forks.FILE
    here, there = ForkStore(path, "http://a:8083/"), ForkStore(path, "http://b:8083")
    here.put(new_record("f1", "o1", before_turn=3, original_turns=4))
    assert ForkStore(path, "http://a:8083").get("f1") == here.get("f1")  # read back by a new store
    record = here.get("f1")
    assert record is not None and (record.original, record.fork_turns, record.turns_gone) == ("o1", 2, 2)
    assert there.get("f1") is None  # another controller's session of the same id is not this one
    assert here.pop("f1") == record and here.pop("f1") is None


def test_the_file_is_the_users_only_and_a_damaged_one_starts_afresh(tmp_path):
    path = tmp_path / forks.FILE
    path.write_text("{not json")
    path.chmod(0o644)
    store = ForkStore(path, "http://a")
    assert store.get("f1") is None
    store.put(new_record("f1", "o1", 2, 2))
    assert path.stat().st_mode & 0o777 == 0o600 and store.get("f1") is not None


def test_the_records_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(forks, "MAX_RECORDS", 3)
    store = ForkStore(tmp_path / forks.FILE, "http://a")
    for n in range(5):
        store.put(forks.ForkRecord(f"f{n}", "o", 2, 1, 1, at=float(n)))
    assert [n for n in range(5) if store.get(f"f{n}")] == [2, 3, 4]  # the oldest went
