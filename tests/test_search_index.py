"""Searching a conversation (``model/search.py``, pure): what is searched (text, tool calls,
rewound turns shown in place), case-insensitive hits in order, the count and the place of a hit,
stepping both ways, and an index that keeps up with the items as they change -- checked against a
plain left-to-right scan of each item's text, for generated items, queries and changes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewindtui.model import Conversation, Item, ItemKind
from rewindtui.model.search import MAX_QUERY, SearchIndex, fold, searchable_text
from test_rewound import session_after_rewind

SETTINGS = settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def item(key: str, text: str, *, rewound: bool = False) -> Item:
    it = Item(ItemKind.MESSAGE, key, role="agent", text=text)
    if rewound:
        from rewindtui.model.rewound import Mark

        it.rewound = Mark(None, None, None)
    return it


def reference(items: list[Item], query: str) -> list[tuple[int, int]]:
    """(item index, occurrence in the item) of every hit: a left-to-right scan of each item."""
    hits = []
    for index, it in enumerate(items):
        text = fold(searchable_text(it))
        at, nth = text.find(query), 0
        while at >= 0:
            hits.append((index, nth))
            nth += 1
            at = text.find(query, at + len(query))
    return hits


def walk_forward(index: SearchIndex, query: str) -> list[tuple[int, int]]:
    out, hit = [], index.first(query)
    while hit is not None:
        out.append((hit.index, hit.nth))
        assert index.ordinal(query, hit) == len(out)
        hit = index.after(query, hit.at)
    return out


def walk_back(index: SearchIndex, query: str) -> list[tuple[int, int]]:
    out, hit = [], index.last(query)
    while hit is not None:
        out.append((hit.index, hit.nth))
        hit = index.before(query, hit.at)
    return out[::-1]


# -- examples ------------------------------------------------------------------------------------
def test_hits_are_case_insensitive_in_order_with_their_place_and_count():
    items = [item("a", "Hello world"), item("b", "nothing here"), item("c", "HELLO hello, said the echo")]
    index = SearchIndex()
    assert index.sync(items) and not index.sync(items)
    query = SearchIndex.query_of("  heLLo ")
    assert query == "hello" and index.count(query) == 3
    assert walk_forward(index, query) == [(0, 0), (2, 0), (2, 1)]
    last = index.last(query)
    assert last is not None and index.ordinal(query, last) == 3 and last.index == 2
    assert index.in_item(query, 2) == 2 and index.in_item(query, 1) == 0
    assert index.count(SearchIndex.query_of("absent")) == 0 and index.first("absent") is None
    assert SearchIndex.query_of("   ") == "" and index.count("") == 0 and index.first("") is None


def test_a_hit_never_spans_two_items():
    items = [item("a", "ends with ab"), item("b", "cd starts")]
    index = SearchIndex()
    index.sync(items)
    assert index.count("ab") == 1 and index.count("abcd") == 0 and index.count(SearchIndex.query_of("b\x00c")) == 0


def test_hits_near_an_item_find_the_closest_on_each_side():
    items = [item(str(i), "needle" if i in (2, 5) else "hay") for i in range(8)]
    index = SearchIndex()
    index.sync(items)
    assert index.at_or_before_item("needle", 4).index == 2
    assert index.at_or_before_item("needle", 5).index == 5
    assert index.at_or_after_item("needle", 3).index == 5
    assert index.at_or_after_item("needle", 2).index == 2
    assert index.at_or_before_item("needle", 1) is None and index.at_or_after_item("needle", 6) is None


def test_tool_calls_are_searched_by_name_arguments_and_result():
    call = {
        "kind": "message",
        "messageId": "m1",
        "role": "agent",
        "parts": [
            {"kind": "text", "text": "Let me look."},
            {
                "kind": "data",
                "data": {"id": "c1", "name": "delete_file", "args": {"path": "Temp.txt"}},
                "metadata": {"kagent_type": "function_call"},
            },
            {
                "kind": "data",
                "data": {"id": "c1", "name": "delete_file", "response": {"ok": "Deleted"}},
                "metadata": {"kagent_type": "function_response"},
            },
        ],
    }
    it = Item.from_message(call)
    text = searchable_text(it)
    assert text.startswith("Let me look.\n") and "delete_file(" in text and "Temp.txt" in text and "Deleted" in text
    index = SearchIndex()
    index.sync([it])
    assert index.count("temp.txt") == 1 and index.count("deleted") == 1


def test_rewound_turns_shown_in_place_are_searched_and_marked():
    everything, current = session_after_rewind()
    conversation = Conversation("s")
    conversation.load_tasks(current)
    index = SearchIndex()
    index.sync(conversation.items)
    assert index.count("question") == 2  # turns 1 and 4: what the conversation holds
    conversation.show_rewound(everything)
    assert index.sync(conversation.items)
    hits = []
    hit = index.first("question")
    while hit is not None:
        hits.append((conversation.items[hit.index].text, hit.rewound))
        hit = index.after("question", hit.at)
    assert hits == [("question 1", False), ("question 2", True), ("question 3", True), ("question 4", False)]


def test_a_query_that_overlaps_itself_counts_as_a_left_to_right_scan():
    items = [item("a", "aaaaa"), item("b", "xaax"), item("c", "ababab")]
    index = SearchIndex()
    index.sync(items)
    for query in ("aa", "aba", "a"):
        ref = reference(items, query)
        assert index.count(query) == len(ref)
        assert walk_forward(index, query) == ref == walk_back(index, query)


def test_an_item_changed_in_place_is_read_again_and_the_rest_is_not():
    items = [item(str(i), f"message {i}") for i in range(5)]
    index = SearchIndex()
    index.sync(items)
    reads: list[str] = []
    items[4]._set_text("message 4 grows a needle")  # a streamed delta
    original = SearchIndex._reindex

    def counting(self, its, first):
        reads.extend(it.key for it in its[first:])
        original(self, its, first)

    SearchIndex._reindex = counting  # type: ignore[method-assign]
    try:
        assert index.sync(items)
    finally:
        SearchIndex._reindex = original  # type: ignore[method-assign]
    assert reads == ["4"] and index.count("needle") == 1


def test_the_query_is_bounded():
    assert len(SearchIndex.query_of("x" * 10_000)) == MAX_QUERY


# -- properties ----------------------------------------------------------------------------------
texts = st.text(alphabet="aAbB éİ\x00\n", max_size=12)
queries = st.text(alphabet="aAbB éiİ", min_size=1, max_size=3)


@st.composite
def histories(draw):
    """A list of items and the changes made to it (the view's life: deltas, turns, pages, rewinds)."""
    count = draw(st.integers(0, 6))
    items = [item(f"k{i}", draw(texts), rewound=draw(st.booleans())) for i in range(count)]
    steps = draw(
        st.lists(
            st.tuples(st.sampled_from(["set", "append", "prepend", "cut", "drop"]), texts, st.integers(0, 10)),
            max_size=6,
        )
    )
    return items, steps


@SETTINGS
@given(histories(), queries, st.booleans())
def test_the_index_finds_what_a_scan_finds_through_any_changes(history, raw_query, hints):
    """``hints``: each sync is told which items changed in place (as a view's changes say)."""
    items, steps = history
    query = SearchIndex.query_of(raw_query)
    index = SearchIndex()
    fresh_key = iter(range(1000, 2000))
    touched: list[Item] = []
    for n in range(len(steps) + 1):
        index.sync(items, touched if hints and n else None)
        touched = []
        if query:
            ref = reference(items, query)
            assert index.count(query) == len(ref)
            assert walk_forward(index, query) == ref
            assert walk_back(index, query) == ref
            for i, it in enumerate(items):
                assert index.in_item(query, i) == sum(1 for h in ref if h[0] == i)
                after = [h for h in ref if h[0] >= i]
                before = [h for h in ref if h[0] <= i]
                hit = index.at_or_after_item(query, i)
                assert (None if hit is None else (hit.index, hit.nth)) == (after[0] if after else None)
                hit = index.at_or_before_item(query, i)
                assert (None if hit is None else (hit.index, hit.nth)) == (before[-1] if before else None)
                if hit is not None:
                    assert hit.rewound == (items[hit.index].rewound is not None)
                    assert index.item(hit.index) is items[hit.index] and it is items[i]
        if n == len(steps):
            break
        what, text, at = steps[n]
        if what == "set" and items:
            items[at % len(items)]._set_text(text)
            touched.append(items[at % len(items)])
        elif what == "append":
            items.append(item(f"k{next(fresh_key)}", text))
        elif what == "prepend":
            items[:0] = [item(f"k{next(fresh_key)}", text)]
        elif what == "cut":
            del items[at % (len(items) + 1) :]
        elif what == "drop" and items:
            del items[at % len(items)]
