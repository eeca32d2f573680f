"""A rewind's (or redo's) answer bounded by the client: only the newest N messages of the effective
history, and the whole count in the Task's metadata (``contract.EFFECTIVE_HISTORY_TOTAL_KEY``) --
over REST (``contract.REST_HISTORY_LENGTH_FIELD``) and over A2A (the request's own
``configuration.historyLength``), against the embedded server: real ADK and SQLite, loopback HTTP.
"""

from __future__ import annotations

from typing import Any

from srvkit import A2A, REWIND_KEY, Api, Turn, normalize_result

from rewindtui.a2a import contract
from rewindtui.server import EmbeddedServer

TOTAL = contract.EFFECTIVE_HISTORY_TOTAL_KEY


def ids(turns: list[Turn]) -> list[str]:
    return [mid for turn in turns for mid in turn.message_ids]


def history_ids(task: dict[str, Any]) -> list[str]:
    return [m["messageId"] for m in task.get("history") or []]


def post(api: Api, route: str, sid: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = api.post(route.format(id=sid), body)
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


def test_rest_rewind_and_redo_answer_the_newest_messages_and_the_whole_count(
    server: EmbeddedServer, make_a2a, make_api
) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "bounded-rest"
    turns = [Turn(a2a.stream(text, sid)) for text in ("one", "two", "three", "four")]
    kept = ids(turns[:3])
    rewound = post(
        api,
        contract.REST_REWIND,
        sid,
        {contract.REST_BEFORE_FIELD: turns[3].invocation_id, contract.REST_HISTORY_LENGTH_FIELD: 2},
    )
    assert history_ids(rewound) == kept[-2:]
    assert rewound["metadata"][TOTAL] == len(kept)
    assert rewound["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    assert api.merged_ids(sid) == kept  # the store holds the whole effective history, as before

    redone = post(api, contract.REST_REDO, sid, {contract.REST_HISTORY_LENGTH_FIELD: 3})
    assert history_ids(redone) == ids(turns)[-3:]
    assert redone["metadata"][TOTAL] == len(ids(turns))

    # more than there is: the whole history; without the field: the whole history, and the count
    again = post(
        api,
        contract.REST_REWIND,
        sid,
        {contract.REST_BEFORE_FIELD: turns[1].invocation_id, contract.REST_HISTORY_LENGTH_FIELD: 1000},
    )
    assert history_ids(again) == ids(turns[:1]) and again["metadata"][TOTAL] == len(ids(turns[:1]))
    whole = post(api, contract.REST_REDO, sid, {})
    assert history_ids(whole) == ids(turns) and whole["metadata"][TOTAL] == len(ids(turns))
    none = post(
        api,
        contract.REST_REWIND,
        sid,
        {contract.REST_BEFORE_FIELD: turns[2].invocation_id, contract.REST_HISTORY_LENGTH_FIELD: 0},
    )
    assert history_ids(none) == [] and none["metadata"][TOTAL] == len(ids(turns[:2]))


def test_a_bad_history_length_is_refused_and_changes_nothing(server: EmbeddedServer, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "bounded-bad"
    turns = [Turn(a2a.stream(text, sid)) for text in ("one", "two")]
    for bad in (-1, "3", 2.5, True):
        resp = api.post(
            contract.REST_REWIND.format(id=sid),
            {contract.REST_BEFORE_FIELD: turns[1].invocation_id, contract.REST_HISTORY_LENGTH_FIELD: bad},
        )
        assert resp.status_code == 400 and contract.REST_HISTORY_LENGTH_FIELD in resp.json()["error"], resp.text
    assert api.merged_ids(sid) == ids(turns)


def test_a2a_rewind_answers_the_newest_history_length_messages(
    server: EmbeddedServer, make_a2a, make_api, dialect: str
) -> None:
    a2a: A2A = make_a2a(server, dialect)
    api = make_api(server)
    sid = f"bounded-a2a-{dialect}"
    turns = [Turn(a2a.stream(text, sid)) for text in ("one", "two", "three")]
    message = a2a.message("", sid, metadata={REWIND_KEY: turns[2].invocation_id})
    body = a2a.rpc(
        "message/stream", "SendStreamingMessage", {"message": message, "configuration": {"historyLength": 3}}
    )
    frames = a2a.post_stream(body)
    assert len(frames) == 1 and "result" in frames[0], frames
    task = normalize_result(frames[0]["result"])
    assert history_ids(task) == ids(turns[:2])[-3:]
    assert task["metadata"][TOTAL] == len(ids(turns[:2]))
    assert api.merged_ids(sid) == ids(turns[:2])
