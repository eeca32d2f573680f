"""Search finds canonically equivalent text: "café" typed (é one code point, as keyboards give it)
finds "café" written as e + U+0301 (as text from macOS file names, some editors and agents comes)
and the other way round, and the drawn line marks it. Seen in a real terminal: "No hits for
“café”" with the decomposed word on screen."""

from __future__ import annotations

import unicodedata

from rewindtui.model import Item, ItemKind
from rewindtui.model.search import SearchIndex
from rewindtui.tui.widgets.transcript_search import occurrences

COMPOSED = "caf\u00e9"
DECOMPOSED = "cafe\u0301"


def index_of(*texts: str) -> SearchIndex:
    index = SearchIndex()
    index.sync([Item(ItemKind.MESSAGE, f"k{i}", role="agent", text=t) for i, t in enumerate(texts)])
    return index


def test_a_composed_query_finds_decomposed_text_and_the_other_way_round():
    texts = (f"a {DECOMPOSED} here", "nothing", f"and {COMPOSED}, {DECOMPOSED.upper()} again")
    index = index_of(*texts)
    for typed in (COMPOSED, DECOMPOSED, COMPOSED.upper()):
        query = SearchIndex.query_of(typed)
        assert index.count(query) == 3, typed
        hits, hit = [], index.first(query)
        while hit is not None:
            hits.append((hit.index, hit.nth))
            hit = index.after(query, hit.at)
        assert hits == [(0, 0), (2, 0), (2, 1)], typed


def test_the_drawn_line_marks_the_decomposed_word():
    line = f"decomposed {DECOMPOSED} here, {COMPOSED} too"
    query = SearchIndex.query_of(COMPOSED)
    spans = occurrences(line, query)
    assert [line[a:b] for a, b in spans] == [DECOMPOSED, COMPOSED]
    assert all(unicodedata.normalize("NFC", line[a:b]) == COMPOSED for a, b in spans)
    # plain text is marked as before
    assert occurrences("a Cafe and a cafe", SearchIndex.query_of("cafe")) == [(2, 6), (13, 17)]
