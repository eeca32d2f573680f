"""The composer: keys in the order typed (text + Enter in one burst), prompt recall, clean paste."""

from __future__ import annotations

from textual import events

from kit.apps import make_app
from kit.fakes import HoldStreamEnd
from kit.pilot import SIZE, burst, notifications, server_users, settle, turns, user_texts, wait_until
from rewindtui.tui.paste import PASTE_END, PASTE_START, PasteSafeParser


async def test_text_and_enter_in_one_burst_send_the_whole_text(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        burst(app, [*"hello", "space", *"world", "enter"])
        await settle(app, pilot)
        assert user_texts(app) == ["hello world"]
        burst(app, [*"second", "enter"])
        await settle(app, pilot)
        assert user_texts(app) == ["hello world", "second"]
        assert await server_users(server, app) == ["hello world", "second"]
        assert app.chat_screen.composer.text == ""


async def test_enter_right_after_a_turn_ended_is_accepted(server):
    hold = HoldStreamEnd()
    app = make_app(server, transport=hold)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        burst(app, [*"one", "enter"])
        # the turn has ended (its final status arrived) while its stream is still closing
        await wait_until(pilot, lambda: hold.holding.is_set() and app.chat.conversation.turn_state == "completed")
        assert app.chat.sending and app.chat_screen.status.turn == "completed"
        burst(app, [*"two", "enter"])
        await pilot.pause()
        assert app.chat_screen.composer.text == ""  # taken, not refused
        assert not any("Wait" in n or "still coming" in n for n in notifications(app))
        hold.open()
        await settle(app, pilot)
        assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]


async def test_up_recalls_earlier_prompts_per_session_and_keeps_them(server, tmp_path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "first prompt", "second prompt")
        session_id = app.chat.session_id
        composer = app.chat_screen.composer
        await pilot.press("up")
        assert composer.text == "second prompt"
        await pilot.press("up")
        assert composer.text == "first prompt"
        await pilot.press("up")  # the oldest: stays
        assert composer.text == "first prompt"
        await pilot.press("down")
        assert composer.text == "second prompt"
        await pilot.press("down")  # past the newest: back to the (empty) draft
        assert composer.text == ""
        # a changed recall is a draft: ↑ moves the cursor, it does not replace the text
        await pilot.press("up", "!", "up")
        assert composer.text == "second prompt!"
        assert not app.chat_screen.rewind_mode and app.chat_screen.transcript.cursor is None
        # a new session has its own (empty) history
        composer.text = ""
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await pilot.press("up")
        assert composer.text == ""
    # kept on disk for the session: a new app recalls them, rewound or not
    again = make_app(server, session_id=session_id, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        await pilot.press("up")
        assert again.chat_screen.composer.text == "second prompt"


async def test_paste_with_escape_sequences_arrives_clean(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat_screen.composer
        app.post_message(events.Paste("pasted \x1b[31mred\x1b[0m text\x1b]0;title\x07 and\r\nmore\x00"))
        await pilot.pause()
        assert composer.text == "pasted red text and\nmore"


def feed(parser: PasteSafeParser, *chunks: str) -> list:
    out = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out


def test_parser_keeps_escape_sequences_inside_a_bracketed_paste():
    body = "pasted \x1b[31mred\x1b[0m text\x1b]0;title\x07 end"
    events_out = feed(PasteSafeParser(), f"a{PASTE_START}{body}{PASTE_END}b")
    kinds = [(type(e).__name__, getattr(e, "key", None) or getattr(e, "text", None)) for e in events_out]
    assert kinds == [("Key", "a"), ("Paste", body), ("Key", "b")]


def test_parser_handles_paste_markers_split_across_reads():
    body = "x\x1b[1my"
    chunks = ["q\x1b[2", "00~x\x1b[1", "my\x1b[20", "1~z"]
    assert "".join(chunks) == f"q{PASTE_START}{body}{PASTE_END}z"
    events_out = feed(PasteSafeParser(), *chunks)
    assert [getattr(e, "text", getattr(e, "key", None)) for e in events_out] == ["q", body, "z"]


def test_parser_passes_a_lone_escape_key_through_at_once():
    parser = PasteSafeParser()
    out = feed(parser, "\x1b")
    # Textual's own parser waits a moment to tell Esc from an escape sequence; nothing is held here
    assert parser._pending == "" and out == []
    import time

    time.sleep(0.15)
    assert [getattr(e, "key", None) for e in parser.tick()] == ["escape"]


async def test_two_messages_in_one_burst_are_two_messages(server):
    """Text, Enter, more text, Enter in one burst: the second message is only what was typed after
    the first Enter (the first submit empties the composer before the next keys land), and neither
    is lost."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        burst(app, [*"one", "enter", *"two", "enter"])
        await settle(app, pilot)
        await wait_until(pilot, lambda: len(user_texts(app)) == 2 or "two" in app.chat_screen.composer.text)
        await settle(app, pilot)
        sent = await server_users(server, app)
        composer = app.chat_screen.composer.text
        # "two" is either sent as its own message after "one", or kept as the draft: never glued to "one"
        assert sent[0] == "one" and not any("onetwo" in text for text in [*sent, composer])
        assert sent == ["one", "two"] or (sent == ["one"] and composer == "two")


async def test_messages_refused_in_a_row_come_back_in_order():
    """Typed while the app is still connecting: each message is refused and put back, in the
    order it was typed, with nothing lost."""
    import asyncio

    from rewindtui.tui.app import RewindApp

    async def connector():
        await asyncio.Event().wait()  # still connecting when the test ends

    app = RewindApp(connector)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        burst(app, [*"one", "enter", *"two", "enter"])
        await wait_until(pilot, lambda: len([n for n in notifications(app) if "draft is kept" in n]) == 2)
        assert app.chat_screen.composer.text == "one\ntwo"
