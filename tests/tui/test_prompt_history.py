"""Prompt recall as pure logic, and its store on disk."""

from __future__ import annotations

from rewindtui.chat.prompt_history import LIMIT, PromptHistory, PromptStore


def test_browsing_back_and_forth_returns_to_the_draft():
    history = PromptHistory(["one", "two", "three"])
    assert history.older("") == "three"
    assert history.showing("three") and not history.showing("three!")
    assert history.older("three") == "two"
    assert history.older("two") == "one"
    assert history.older("one") is None  # the oldest: nothing before
    assert history.newer() == "two"
    assert history.newer() == "three"
    assert history.newer() == ""  # past the newest: the draft the user started from
    assert not history.browsing and history.newer() is None


def test_empty_history_and_repeats():
    history = PromptHistory()
    assert history.older("") is None
    assert history.add("same") and not history.add("same") and not history.add("   ")
    assert history.prompts == ["same"]
    for n in range(LIMIT + 10):
        history.add(f"p{n}")
    assert len(history.prompts) == LIMIT and history.prompts[-1] == f"p{LIMIT + 9}"


def test_store_keeps_prompts_per_server_and_session(tmp_path):
    store = PromptStore(tmp_path / "prompts")
    assert store.load("http://a/", "s1").prompts == []  # nothing yet, no directory needed
    store.append("http://a/", "s1", "hello\nworld")
    store.append("http://a/", "s1", "second")
    store.append("http://a/", "s2", "other session")
    store.append("http://b/", "s1", "other server")
    assert store.load("http://a/", "s1").prompts == ["hello\nworld", "second"]
    assert store.load("http://a/", "s2").prompts == ["other session"]
    assert store.load("http://b/", "s1").prompts == ["other server"]


def test_store_skips_a_torn_line_and_compacts_a_long_file(tmp_path):
    store = PromptStore(tmp_path)
    for n in range(2 * LIMIT + 5):
        store.append("u", "s", f"p{n}")
    path = store._path("u", "s")
    with path.open("a") as out:
        out.write('"torn')  # a crash mid-write
    loaded = store.load("u", "s")
    assert loaded.prompts[-1] == f"p{2 * LIMIT + 4}" and len(loaded.prompts) == LIMIT
    assert len(path.read_text().splitlines()) == LIMIT  # rewritten with the newest only
