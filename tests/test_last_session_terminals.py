"""LastSession: two apps on one data dir, each in its own terminal, each reopen the session they
had open; a terminal the file does not know (a new one) opens the one opened last anywhere."""

from __future__ import annotations

from pathlib import Path

from rewindtui.tui.last_session import LastSession


def test_each_terminal_reopens_its_own_session(tmp_path: Path):
    first = LastSession(tmp_path, terminal="/dev/pts/1")
    second = LastSession(tmp_path, terminal="/dev/pts/2")
    first.save("embedded", "session-of-the-first")
    second.save("embedded", "session-of-the-second")  # opened last
    assert LastSession(tmp_path, terminal="/dev/pts/1").load("embedded") == "session-of-the-first"
    assert LastSession(tmp_path, terminal="/dev/pts/2").load("embedded") == "session-of-the-second"
    assert LastSession(tmp_path, terminal="/dev/pts/9").load("embedded") == "session-of-the-second"
    assert LastSession(tmp_path, terminal="").load("embedded") == "session-of-the-second"
    assert LastSession(tmp_path, terminal="/dev/pts/1").load("http://elsewhere") is None


def test_without_a_terminal_one_session_per_server(tmp_path: Path):
    store = LastSession(tmp_path, terminal="")
    store.save("embedded", "a")
    store.save("embedded", "b")
    assert store.load("embedded") == "b"
    assert LastSession(tmp_path, terminal="/dev/pts/4").load("embedded") == "b"
