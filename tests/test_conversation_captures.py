"""Replay the real captures through ``parse_frame`` + ``Conversation.apply`` and assert the exact
transcript: roles, texts, invocation ids and tool call pairs (name, args, result)."""

from __future__ import annotations

import json
import uuid

import pytest

from captures import load
from rewindtui.a2a import contract
from rewindtui.a2a import metadata as meta
from rewindtui.a2a.classify import EventKind, classify, classify_frame
from rewindtui.client.a2a_client import parse_frame
from rewindtui.model import EFFECTIVE_HISTORY_KEY, Conversation, Item, ItemKind, extract_messages_from_tasks

K = "kagent-0.10.4/"
A = "a2a-1.0/"

INV_02 = "e-5eefff43-9e1e-4622-861e-f8125c6dd910"
INV_03 = "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba"
INV_04 = "e-64d9d374-c248-4b65-a0c1-7d7b2e66b322"
INV_05 = "e-ec328c1f-ff6c-4bc9-8a95-29325259af82"
INV_06 = "e-8327c228-45b1-4147-ae39-48303bce8a80"
INV_10 = "e-d763dcc6-e838-4042-ae8c-b90ef71a4919"
INV_12 = "e-8031d1c2-7ea4-486d-bbf7-5f0d9089c8f5"

REPLY_02 = "You said: hello (turn 1; history: ['hello']; weather_calls=0)"
REPLY_03 = "Tool get_weather returned: {'city': 'Tokyo', 'forecast': 'sunny', 'temp_c': 21, 'call_no': 1}"
REPLY_04 = (
    "You said: third message (turn 3; history: ['hello', 'what is the weather in Tokyo', 'third message']; "
    "weather_calls=1)"
)
REPLY_10 = (
    "You said: non streaming hello (turn 5; history: ['hello', 'what is the weather in Tokyo', 'third message', "
    "'after rewind', 'non streaming hello']; weather_calls=1)"
)
WEATHER = (("get_weather", {"city": "Tokyo"}, {"city": "Tokyo", "forecast": "sunny", "temp_c": 21, "call_no": 1}),)

TURN_02 = [
    ("message", "user", "hello", INV_02, ()),
    ("message", "agent", REPLY_02, INV_02, ()),
]
TURN_03 = [
    ("message", "user", "what is the weather in Tokyo", INV_03, ()),
    ("message", "agent", "", INV_03, WEATHER),
    ("message", "agent", REPLY_03, INV_03, ()),
]
TURN_04 = [
    ("message", "user", "third message", INV_04, ()),
    ("message", "agent", REPLY_04, INV_04, ()),
]


def row(item: Item) -> tuple:
    tools = tuple((t.name, t.args, t.result) for t in item.tools) if item.kind is ItemKind.MESSAGE else ()
    return (item.kind.value, item.role, item.text, item.invocation_id, tools)


def view(conv_or_items) -> list[tuple]:
    items = conv_or_items.items if isinstance(conv_or_items, Conversation) else conv_or_items
    return [row(i) for i in items]


def snapshot(conv: Conversation) -> tuple:
    """Everything a view could draw, deep: identity keys, kinds, roles, texts, ids, revs, tools."""
    items = tuple(
        (
            i.key,
            i.kind,
            i.role,
            i.text,
            i.invocation_id,
            i.task_id,
            i.rev,
            i.streaming,
            tuple(i.message_ids),
            tuple(
                (
                    t.call_id,
                    t.name,
                    json.dumps(t.args, sort_keys=True),
                    json.dumps(t.result, sort_keys=True),
                    t.has_result,
                )
                for t in i.tools
            ),
        )
        for i in conv.items
    )
    return items, conv.turn_state, conv.current_task_id, conv.input_task_id, frozenset(conv.message_ids())


def replay(conv: Conversation, name: str, *, send: bool = True, lines: list[str] | None = None) -> None:
    """Replay one capture: the request's message first (as the app shows what the user sent),
    then every data frame of the response."""
    cap = load(name)
    message = (cap.request or {}).get("params", {}).get("message")
    if send and message is not None:
        conv.add_user_message(message)
    for line in lines if lines is not None else cap.data_lines:
        conv.apply(parse_frame(line))


def kagent_session() -> Conversation:
    conv = Conversation("s1")
    for name in ("02_turn_plain_text.txt", "03_turn_with_tool_call.txt", "04_turn_three.txt"):
        replay(conv, K + name)
    return conv


# -- kagent turns --------------------------------------------------------------------------------
def test_three_kagent_turns_exact_transcript():
    conv = kagent_session()
    assert view(conv) == TURN_02 + TURN_03 + TURN_04
    assert conv.turn_state == "completed"
    assert not conv.busy
    assert conv.turn_invocations() == [INV_02, INV_03, INV_04]
    assert conv.user_text_of(INV_03) == "what is the weather in Tokyo"


def test_echoed_user_message_is_shown_once_with_or_without_the_local_copy():
    sent = Conversation("s1")
    replay(sent, K + "02_turn_plain_text.txt", send=True)
    echoed_only = Conversation("s1")
    replay(echoed_only, K + "02_turn_plain_text.txt", send=False)
    assert view(sent) == view(echoed_only) == TURN_02
    # the local copy adopted the server's task id
    assert sent.items[0].task_id == "36af6b91-36cc-446c-b644-5f9c4e8529ca"


def test_artifact_repeating_the_last_message_is_not_appended():
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    assert [i.kind for i in conv.items].count(ItemKind.ARTIFACT) == 0
    assert [r[2] for r in view(conv)].count(REPLY_02) == 1


def test_each_frame_changes_the_view_as_expected_for_a_plain_turn():
    cap = load(K + "02_turn_plain_text.txt")
    conv = Conversation("s1")
    conv.add_user_message(cap.request["params"]["message"])
    assert conv.turn_state == "submitted"
    lengths, ended = [], []
    for line in cap.data_lines:
        change = conv.apply(parse_frame(line))
        lengths.append(len(conv))
        ended.append(change.turn_ended)
    assert lengths == [1, 1, 2, 2, 2]
    assert ended == [False, False, False, False, True]


def test_streaming_deltas_grow_one_live_item_then_the_full_message_replaces_it():
    cap = load(K + "05_turn_streaming_partials.txt")
    conv = Conversation("s1")
    conv.add_user_message(cap.request["params"]["message"])
    lines = cap.data_lines
    for line in lines[:10]:  # submitted, working, 8 deltas
        conv.apply(parse_frame(line))
    live = conv.items[-1]
    assert len(conv) == 2
    assert live.streaming is True
    assert live.text == "You said: hello (turn 1; history: ['hello']; weather_calls=0)"
    assert live.invocation_id == INV_05
    for line in lines[10:]:
        conv.apply(parse_frame(line))
    assert view(conv) == [
        ("message", "user", "hello", INV_05, ()),
        ("message", "agent", REPLY_02, INV_05, ()),
    ]
    assert not any(i.streaming for i in conv.items)
    # the full message (not the live buffer) is what is stored
    assert conv.items[-1].key == "c2607291-7916-4ff2-826c-51803f370c6b"
    assert conv.items[-1].message_ids == ["c2607291-7916-4ff2-826c-51803f370c6b"]


def test_streaming_with_tool_does_not_double_text():
    conv = Conversation("s1")
    replay(conv, K + "06_turn_streaming_with_tool.txt")
    assert view(conv) == [
        ("message", "user", "what is the weather in Tokyo", INV_06, ()),
        ("message", "agent", "", INV_06, WEATHER),
        ("message", "agent", REPLY_03, INV_06, ()),
    ]
    assert conv.turn_state == "completed"


def test_agent_text_next_to_a_tool_call_is_kept():
    """kagent bug #852: text in the same message as a function_call must not be lost."""
    conv = Conversation("s1")
    frame = {
        "jsonrpc": "2.0",
        "id": "x",
        "result": {
            "kind": "status-update",
            "taskId": "t1",
            "contextId": "s1",
            "final": False,
            "status": {
                "state": "working",
                "message": {
                    "kind": "message",
                    "messageId": "m-both",
                    "role": "agent",
                    "taskId": "t1",
                    "metadata": {"kagent_invocation_id": "e-x"},
                    "parts": [
                        {"kind": "text", "text": "Let me check the weather."},
                        {
                            "kind": "data",
                            "data": {"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}},
                            "metadata": {"kagent_type": "function_call"},
                        },
                    ],
                },
            },
        },
    }
    conv.apply(classify_frame(frame))
    assert view(conv) == [
        ("message", "agent", "Let me check the weather.", "e-x", (("get_weather", {"city": "Oslo"}, None),))
    ]


def test_failed_without_ids_gives_an_error_item():
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    # the rewind control message of 07 has no text: the app does not show it locally
    replay(conv, K + "07_failed_no_parts.txt", send=False)
    assert view(conv) == TURN_02 + [
        ("message", "user", "", None, ()),
        ("error", "system", "No parts in the new_message.", None, ()),
    ]
    assert conv.turn_state == "failed"
    assert conv.items[-1].rewind_target is None


def test_stock_kagent_ignoring_a_rewind_shows_an_ordinary_turn_with_an_empty_user_message():
    conv = kagent_session()
    replay(conv, K + "12_rewind_key_ignored_by_stock_server.txt", send=False)
    assert view(conv) == TURN_02 + TURN_03 + TURN_04 + [
        ("message", "user", "", INV_12, ()),
        ("message", "agent", REPLY_04, INV_12, ()),
    ]
    # nothing was rolled back: the "rewound" turn is still there
    assert conv.turn_invocations() == [INV_02, INV_03, INV_04, INV_12]


def test_http_200_json_rpc_error_frame_ends_the_turn_with_an_error_item():
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    replay(conv, K + "11_continue_completed_task_error.txt")
    assert view(conv) == TURN_02 + [
        ("message", "user", "follow-up same task", None, ()),
        (
            "error",
            "system",
            "JSON-RPC error -32602: Task 36af6b91-36cc-446c-b644-5f9c4e8529ca is in terminal state: completed",
            None,
            (),
        ),
    ]
    assert conv.turn_state == "failed"


def test_nonstream_task_result_with_doubled_user_message():
    cap = load(K + "10_message_send_nonstream.txt")
    conv = Conversation("s1")
    conv.add_user_message(cap.request["params"]["message"])
    change = conv.apply(classify_frame(cap.json_body))
    assert change.turn_ended
    assert view(conv) == [
        ("message", "user", "non streaming hello", INV_10, ()),
        ("message", "agent", REPLY_10, INV_10, ()),
    ]


# -- a2a-sdk: each turn opens with a Task holding only its user message ---------------------------
ECHO_TURN = [
    ("message", "user", "hello", None, ()),
    ("artifact", "agent", "echo: hello", None, ()),
]


def _fresh_ids(lines: list[str], keep_artifact_ids: bool = False) -> list[str]:
    """The same capture as a later turn: new task, message and (unless kept) artifact ids."""
    first = json.loads(lines[0])["result"]
    task = first.get("task", first)
    swaps = {task["id"]: str(uuid.uuid4()), task["history"][0]["messageId"]: str(uuid.uuid4())}
    if not keep_artifact_ids:
        for line in lines:
            update = json.loads(line)["result"]
            artifact = update.get("artifactUpdate", update).get("artifact")
            if artifact:
                swaps[artifact["artifactId"]] = str(uuid.uuid4())
    out = []
    for line in lines:
        for old, new in swaps.items():
            line = line.replace(old, new)
        out.append(line)
    return out


@pytest.mark.parametrize(
    "name",
    [
        A + "a2a-sdk-0.3.26_message_stream.txt",
        A + "a2a-sdk-1.3.0_message_stream_v0.3_compat.txt",
        A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt",
    ],
)
def test_a2a_sdk_turn_alone(name):
    conv = Conversation()
    replay(conv, name)
    assert view(conv) == ECHO_TURN
    assert conv.turn_state == "completed"


@pytest.mark.parametrize(
    "name",
    [A + "a2a-sdk-0.3.26_message_stream.txt", A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt"],
)
def test_turn_opening_task_after_a_kagent_turn_does_not_wipe_it(name):
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    replay(conv, name)
    assert view(conv) == TURN_02 + ECHO_TURN


def test_turn_opening_task_twice_with_different_ids_keeps_both_turns():
    cap = load(A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    conv = Conversation("s1")
    for _ in range(3):
        replay(conv, A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt", lines=_fresh_ids(cap.data_lines))
    assert view(conv) == ECHO_TURN * 3
    assert len({i.task_id for i in conv.items}) == 3


def test_artifact_id_reused_by_a_later_task_is_that_task_s_own_artifact():
    cap = load(A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    conv = Conversation("s1")
    for _ in range(2):
        replay(
            conv,
            A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt",
            lines=_fresh_ids(cap.data_lines, keep_artifact_ids=True),
        )
    assert view(conv) == ECHO_TURN * 2


def test_turn_opening_task_replaces_the_local_user_copy_in_place():
    """The client shows what it sent; the Task echo carries the same messageId: one user item."""
    cap = load(A + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    conv.add_user_message({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]})
    for line in cap.data_lines:
        conv.apply(parse_frame(line))
    assert view(conv) == TURN_02 + ECHO_TURN
    assert conv.items[2].task_id == "747cac0b-3492-472f-af16-bd53aae90653"


# -- extract_messages_from_tasks ------------------------------------------------------------------
def test_extract_08_user_message_twice_with_one_id_is_shown_once():
    task = load(K + "08_tasks_get.txt").json_body["result"]
    assert [m["messageId"] for m in task["history"]].count("43f9cdbe-c819-4880-afc5-489ad43acdf8") == 2
    assert view(extract_messages_from_tasks([task])) == TURN_03


def test_extract_10():
    task = load(K + "10_message_send_nonstream.txt").json_body["result"]
    assert view(extract_messages_from_tasks([task])) == [
        ("message", "user", "non streaming hello", INV_10, ()),
        ("message", "agent", REPLY_10, INV_10, ()),
    ]


def test_extract_keeps_task_order_and_first_position_of_a_repeated_message():
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    t10 = load(K + "10_message_send_nonstream.txt").json_body["result"]
    assert view(extract_messages_from_tasks([t08, t10])) == view(extract_messages_from_tasks([t08])) + view(
        extract_messages_from_tasks([t10])
    )
    assert view(extract_messages_from_tasks([t10, t08]))[0][2] == "non streaming hello"
    # a later task repeating a message id does not move or repeat it
    repeated = dict(t10, history=[t08["history"][0], *t10["history"]])
    assert view(extract_messages_from_tasks([t08, repeated])) == TURN_03 + view(extract_messages_from_tasks([t10]))
    # non-dicts and non-message entries are skipped
    assert view(extract_messages_from_tasks([None, "x", {"history": [{"kind": "status-update"}]}, t10])) == view(
        extract_messages_from_tasks([t10])
    )


def test_load_tasks_then_stream_the_next_turn():
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    conv = Conversation("s1")
    conv.load_tasks([t08])
    replay(conv, K + "04_turn_three.txt")
    assert view(conv) == TURN_03 + TURN_04


def test_tool_result_after_a_task_snapshot_is_still_shown():
    """03 with a Task snapshot of the same task (history: only the user message) between the
    function_call and the function_response, as a server resending its Task mid-turn would."""
    cap = load(K + "03_turn_with_tool_call.txt")
    lines = cap.data_lines
    conv = Conversation("s1")
    conv.add_user_message(cap.request["params"]["message"])
    for line in lines[:3]:  # submitted, working, function_call
        conv.apply(parse_frame(line))
    echo = json.loads(lines[0])["result"]["status"]["message"]
    snapshot_task = {
        "kind": "task",
        "id": echo["taskId"],
        "contextId": "s1",
        "status": {"state": "working"},
        "history": [echo],
    }
    conv.apply(_task_event(snapshot_task))
    for line in lines[3:]:
        conv.apply(parse_frame(line))
    shown = {mid for item in conv.items for mid in item.message_ids}
    assert shown == conv.message_ids()
    results = [t.result for item in conv.items if item.kind is ItemKind.MESSAGE for t in item.tools if t.has_result]
    assert results == [WEATHER[0][2]]


def test_user_message_of_a_failed_send_does_not_take_the_next_turn_s_invocation():
    conv = Conversation("s1")
    replay(conv, K + "02_turn_plain_text.txt")
    # a send that never reached the server: shown locally, then the connection error
    conv.add_user_message(
        {
            "kind": "message",
            "messageId": "m-lost",
            "role": "user",
            "contextId": "s1",
            "parts": [{"kind": "text", "text": "are you there?"}],
        }
    )
    conv.add_error("cannot connect to http://127.0.0.1:9/: connection refused")
    conv.end_turn("failed")
    replay(conv, K + "04_turn_three.txt")
    assert (
        view(conv)
        == TURN_02
        + [
            ("message", "user", "are you there?", None, ()),
            ("error", "system", "cannot connect to http://127.0.0.1:9/: connection refused", None, ()),
        ]
        + TURN_04
    )
    assert conv.user_text_of(INV_04) == "third message"


# -- a Task that is the effective history replaces everything ----------------------------------------
def _task_event(task: dict):
    return classify_frame({"jsonrpc": "2.0", "id": "r", "result": task})


def test_plain_task_with_history_replaces_only_its_own_turn():
    conv = kagent_session()
    keys_before = [i.key for i in conv.items]
    t08 = load(K + "08_tasks_get.txt").json_body["result"]  # the stored form of turn 03
    conv.apply(_task_event(t08))
    assert view(conv) == TURN_02 + TURN_03 + TURN_04
    after = [i.key for i in conv.items]
    assert after[:2] == keys_before[:2] and after[5:] == keys_before[5:]


@pytest.mark.parametrize(
    "how",
    [
        "effective",
        "metadata",
        "session-id",
    ],
)
def test_effective_history_task_replaces_the_whole_conversation(how):
    conv = kagent_session()
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    if how == "metadata":
        t08 = dict(t08, metadata={**t08["metadata"], EFFECTIVE_HISTORY_KEY: True})
    if how == "session-id":
        t08 = dict(t08, id="s1")
    change = conv.apply(_task_event(t08), effective=(how == "effective"))
    assert change.first == 0
    assert view(conv) == TURN_03
    assert conv.message_ids() == {
        "43f9cdbe-c819-4880-afc5-489ad43acdf8",
        "4794cba6-c6ab-4826-87b1-a1c3f3676eee",
        "9cfd7f98-34a2-428e-a9f2-4d8eb6f0f9f9",
        "4f5647e7-1825-49e5-8529-b6289550e192",
    }


def test_effective_history_in_the_10_wrapper_and_task_like_shapes():
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    kindless = {k: v for k, v in t08.items() if k != "kind"}
    for payload in ({"task": kindless}, kindless):
        conv = kagent_session()
        event = classify_frame({"result": payload})
        assert event.is_task
        conv.apply(event, effective=True)
        assert view(conv) == TURN_03


def test_rewind_and_send_keeps_the_new_user_message_after_the_effective_history():
    """Rewind-and-send: the view is cut, the new text is shown, then the server's effective
    history arrives before the new turn's echo; the new message stays, after that history."""
    conv = kagent_session()
    conv.truncate_before(INV_04)
    new = {
        "kind": "message",
        "messageId": "m-edit",
        "role": "user",
        "contextId": "s1",
        "parts": [{"kind": "text", "text": "third message, edited"}],
    }
    conv.add_user_message(new)
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    conv.apply(_task_event(t08), effective=True)
    assert view(conv) == TURN_03 + [("message", "user", "third message, edited", None, ())]
    # the echo of the new message does not show it twice
    echo = dict(new, taskId="t-new")
    conv.apply(
        classify_frame(
            {
                "result": {
                    "kind": "status-update",
                    "taskId": "t-new",
                    "contextId": "s1",
                    "status": {"state": "submitted", "message": echo},
                }
            }
        )
    )
    assert [r[2] for r in view(conv)].count("third message, edited") == 1
    assert conv.items[-1].task_id == "t-new"


# -- optimistic rewind ------------------------------------------------------------------------------
@pytest.mark.parametrize("target, kept", [(INV_02, []), (INV_03, TURN_02), (INV_04, TURN_02 + TURN_03)])
def test_truncate_before_then_rollback_restores_exactly(target, kept):
    conv = kagent_session()
    before = snapshot(conv)
    token, change = conv.truncate_before(target)
    assert view(conv) == kept
    assert change.first == len(kept)
    assert target not in conv.turn_invocations()
    conv.rollback(token)
    assert snapshot(conv) == before
    assert view(conv) == TURN_02 + TURN_03 + TURN_04


def test_truncate_unknown_invocation_raises_and_changes_nothing():
    conv = kagent_session()
    before = snapshot(conv)
    with pytest.raises(KeyError):
        conv.truncate_before("e-not-there")
    assert snapshot(conv) == before


def test_after_truncate_the_rewound_messages_can_arrive_again():
    """Truncation forgets the cut ids, so the server's effective history (or a replay) shows them."""
    conv = kagent_session()
    conv.truncate_before(INV_03)
    t08 = load(K + "08_tasks_get.txt").json_body["result"]
    conv.apply(_task_event(t08))
    assert view(conv) == TURN_02 + TURN_03


def test_rollback_after_further_events_restores_the_pre_truncate_view():
    conv = kagent_session()
    before = snapshot(conv)
    token, _ = conv.truncate_before(INV_03)
    conv.add_user_message(
        {"kind": "message", "messageId": "m-new", "role": "user", "parts": [{"kind": "text", "text": "again"}]}
    )
    conv.add_error("connection dropped")
    conv.rollback(token)
    assert snapshot(conv) == before


def test_header_update_invocation_is_not_offered_as_a_rewind_target():
    conv = Conversation("s1")
    conv.apply(
        classify_frame(
            {
                "result": {
                    "kind": "message",
                    "messageId": "sys-1",
                    "role": "agent",
                    "metadata": {"kagent_invocation_id": "header_update"},
                    "parts": [{"kind": "text", "text": "session header"}],
                }
            }
        )
    )
    replay(conv, K + "02_turn_plain_text.txt")
    assert conv.items[0].invocation_id == "header_update"
    assert conv.items[0].rewind_target is None
    assert conv.turn_invocations() == [INV_02]


def test_unknown_event_is_kept_visible():
    conv = Conversation("s1")
    conv.apply(classify_frame({"result": {"kind": "hologram", "beam": 3}}))
    (item,) = conv.items
    assert item.kind is ItemKind.UNKNOWN
    assert json.loads(item.text) == {"kind": "hologram", "beam": 3}


def test_every_capture_replays_without_unknown_items():
    for name in [
        K + f
        for f in (
            "02_turn_plain_text.txt",
            "03_turn_with_tool_call.txt",
            "04_turn_three.txt",
            "05_turn_streaming_partials.txt",
            "06_turn_streaming_with_tool.txt",
            "07_failed_no_parts.txt",
            "11_continue_completed_task_error.txt",
            "12_rewind_key_ignored_by_stock_server.txt",
        )
    ] + [
        A + f
        for f in (
            "a2a-sdk-0.3.26_message_stream.txt",
            "a2a-sdk-1.3.0_message_stream_v0.3_compat.txt",
            "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt",
        )
    ]:
        conv = Conversation("s1")
        replay(conv, name)
        assert conv.items, name
        assert all(i.kind is not ItemKind.UNKNOWN for i in conv.items), name
        assert conv.turn_state in ("completed", "failed"), name
        assert all(parse_frame(line).kind is not EventKind.UNKNOWN for line in load(name).data_lines)


# -- guards for bugs that would otherwise pass unseen ----------------------------------------------
def _task_first(lines: list[str], *, v10: bool = False) -> list[str]:
    """A kagent-order stream opened with the Task the spec puts first (a2a-sdk's order, and the
    embedded server's from now on): the first status's task, holding its user message."""
    first = json.loads(lines[0])["result"]
    message = first["status"]["message"]
    task = {
        "kind": "task",
        "id": first["taskId"],
        "contextId": first["contextId"],
        "status": {"state": "submitted"},
        "history": [message],
    }
    if v10:
        task = {"task": {k: v for k, v in task.items() if k != "kind"}}
    return [json.dumps({"jsonrpc": "2.0", "id": 1, "result": task})] + lines


@pytest.mark.parametrize(
    "name", ["02_turn_plain_text.txt", "03_turn_with_tool_call.txt", "06_turn_streaming_with_tool.txt"]
)
@pytest.mark.parametrize("v10", [False, True])
def test_both_stream_orders_give_the_same_view(name, v10):
    """A Task first (spec §3.1.2) or a status first (kagent): one and the same transcript."""
    cap = load(K + name)
    status_first = Conversation("s1")
    replay(status_first, K + "02_turn_plain_text.txt")
    replay(status_first, K + name)
    task_first = Conversation("s1")
    replay(task_first, K + "02_turn_plain_text.txt")
    replay(task_first, K + name, lines=_task_first(cap.data_lines, v10=v10))
    assert view(task_first) == view(status_first)
    assert [i.message_ids for i in task_first.items] == [i.message_ids for i in status_first.items]
    assert task_first.turn_state == status_first.turn_state == "completed"


def test_item_reads_adk_keys_before_kagent_keys_on_the_load_path():
    """The hot path (loading a session) must read ``adk_<key>`` before ``kagent_<key>``, like the
    metadata helper does: a message carrying both shows the ADK one."""
    message = {
        "kind": "message",
        "messageId": "m1",
        "role": "agent",
        "parts": [{"kind": "text", "text": "hi"}],
        "metadata": {
            "kagent_invocation_id": "e-kagent",
            "adk_invocation_id": "e-adk",
            "kagent_author": "kagent-name",
            "adk_author": "adk-name",
        },
    }
    (item,) = extract_messages_from_tasks([{"id": "t1", "history": [message]}])
    assert (item.invocation_id, item.author) == ("e-adk", "adk-name")
    assert (meta.invocation_id(message), meta.author(message)) == ("e-adk", "adk-name")
    # and a message with only kagent keys still reads them
    only_kagent = dict(message, messageId="m2", metadata={"kagent_invocation_id": "e-k", "kagent_author": "k"})
    (item,) = extract_messages_from_tasks([{"id": "t1", "history": [only_kagent]}])
    assert (item.invocation_id, item.author) == ("e-k", "k")


def _msg(mid: str, role: str, text: str) -> dict:
    return {"kind": "message", "messageId": mid, "role": role, "parts": [{"kind": "text", "text": text}]}


def test_dedupe_keeps_the_first_position_and_the_first_copy():
    tasks = [
        {"id": "t1", "history": [_msg("a", "user", "one"), _msg("b", "agent", "reply one")]},
        {
            "id": "t2",
            "history": [_msg("c", "user", "two"), _msg("a", "user", "one AGAIN"), _msg("d", "agent", "reply two")],
        },
    ]
    items = extract_messages_from_tasks(tasks)
    assert [(i.message_ids[0], i.text) for i in items] == [
        ("a", "one"),
        ("b", "reply one"),
        ("c", "two"),
        ("d", "reply two"),
    ]
    conv = Conversation("s")
    conv.load_tasks(tasks)
    assert [i.message_ids[0] for i in conv.items] == ["a", "b", "c", "d"]


def test_empty_history_task_like_is_not_a_task():
    """A kindless object with an empty history is not a Task: were it one, a rewind answer check
    could take it for an (empty) effective history and wipe the whole view."""
    payload = {"id": "t9", "contextId": "s1", "status": {"state": "completed"}, "history": []}
    event = classify(payload)
    assert not event.is_task and event.kind is not EventKind.TASK_LIKE
    conv = kagent_session()
    before = view(conv)
    conv.apply(event)
    assert view(conv) == before


def test_an_effective_history_task_in_a_loaded_session_resets_what_came_before():
    """Loading tasks: a rewind's Task (flagged) is the whole conversation up to it, even from a
    server that also lists the rewound tasks."""
    from rewindtui.a2a import contract

    t1 = {"id": "t1", "history": [_msg("a", "user", "one"), _msg("b", "agent", "r1")]}
    t2 = {"id": "t2", "history": [_msg("c", "user", "two"), _msg("d", "agent", "r2")]}
    rewind = {
        "id": "t3",
        "metadata": {contract.EFFECTIVE_HISTORY_KEY: True},
        "history": [_msg("a", "user", "one"), _msg("b", "agent", "r1")],
    }
    t4 = {"id": "t4", "history": [_msg("e", "user", "three"), _msg("f", "agent", "r3")]}
    conv = Conversation("s")
    conv.load_tasks([t1, t2, rewind, t4])
    assert [i.text for i in conv.items] == ["one", "r1", "three", "r3"]


def test_loading_a_session_whose_last_task_runs_or_waits():
    t1 = {"id": "t1", "status": {"state": "completed"}, "history": [_msg("a", "user", "one")]}
    waiting = {"id": "t2", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}, "history": [_msg("b", "user", "two")]}
    running = {"id": "t3", "status": {"state": "working"}, "history": [_msg("c", "user", "three")]}
    conv = Conversation("s")
    conv.load_tasks([t1, waiting])
    assert (conv.turn_state, conv.input_task_id, conv.running_task_id) == ("input-required", "t2", None)
    conv.load_tasks([t1, running])
    assert (conv.turn_state, conv.input_task_id, conv.running_task_id) == ("working", None, "t3")
    conv.load_tasks([t1])
    assert (conv.turn_state, conv.input_task_id, conv.running_task_id) == ("idle", None, None)


def test_tool_numbers_a_protobuf_struct_made_floats_read_as_the_integers_they_were():
    # a2a-sdk 1.x carries data parts as protobuf Struct: every number is a double on the wire
    conv = Conversation("s1")
    call = {
        "kind": "data",
        "data": {"id": "c1", "name": "get_weather", "args": {"city": "Oslo", "days": 2.0}},
        "metadata": {"kagent_type": meta.FUNCTION_CALL},
    }
    result = {
        "kind": "data",
        "data": {"id": "c1", "name": "get_weather", "response": {"temp_c": 21.0, "call_no": 1.0, "rain_mm": 0.5}},
        "metadata": {"kagent_type": meta.FUNCTION_RESPONSE},
    }
    conv.add_user_message(
        {"kind": "message", "messageId": "u1", "role": "agent", "contextId": "s1", "parts": [call, result]}
    )
    (tool,) = conv.items[0].tools
    assert tool.args == {"city": "Oslo", "days": 2} and type(tool.args["days"]) is int
    assert tool.result == {"temp_c": 21, "call_no": 1, "rain_mm": 0.5}
    assert json.dumps(tool.result) == '{"temp_c": 21, "call_no": 1, "rain_mm": 0.5}'


def _canceled_task(reply_metadata: dict) -> dict:
    return {
        "kind": "task",
        "id": "t1",
        "contextId": "c1",
        "status": {"state": "canceled"},
        "history": [
            {"kind": "message", "role": "user", "messageId": "u1", "parts": [{"kind": "text", "text": "tell a story"}]},
            {
                "kind": "message",
                "role": "agent",
                "messageId": "a1",
                "metadata": reply_metadata,
                "parts": [{"kind": "text", "text": "Once upon"}],
            },
        ],
    }


def test_a_stopped_reply_read_back_says_no_more_than_the_live_view():
    """A turn the user stopped: the kept part is marked stopped and no 'canceled' line is added
    under it (the live view shows none); a canceled turn with no kept part still says it."""
    stopped = extract_messages_from_tasks([_canceled_task({contract.STOPPED_KEY: True})])
    assert [i.text for i in stopped] == ["tell a story", "Once upon"]
    assert stopped[-1].stopped
    plain = extract_messages_from_tasks([_canceled_task({})])
    assert [i.text for i in plain][-1] == "This turn was canceled."
