"""What the transcript and the status line draw: one header per turn, the selected turn, text
shown literally in each item's own lines, nothing clipped, narrow terminals, following the bottom."""

from __future__ import annotations

from kit.apps import make_app
from kit.offline import offline_app, offline_chat, replay
from kit.pilot import SIZE, screen_lines, send, settle, turns
from rewindtui.a2a.classify import classify
from rewindtui.tui.app import RewindApp
from rewindtui.tui.transcript_layout import CONTINUATION, START, group_role
from rewindtui.tui.widgets.status_line import Status, status_text

MARKUP = "[bold red]x[/] *stars* \x1b[31mred\x1b[0m \x1b]52;c;Zm9v\x07"
LITERAL = "[bold red]x[/] *stars* red "


def item_lines(transcript, index: int) -> list[str]:
    return [strip.text for strip in transcript._strips(index, transcript._layout_width)]


async def test_a_tool_turn_is_one_group_under_one_header_with_quiet_per_message_buttons():
    chat = offline_chat(["02_turn_plain_text", "03_turn_with_tool_call"])
    app = offline_app(chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        items = chat.conversation.items
        tool_turn = items[-1].rewind_target
        indexes = [i for i, it in enumerate(items) if it.rewind_target == tool_turn and it.role != "user"]
        assert len(indexes) >= 2  # the call and the answer are separate messages on the wire
        roles = [group_role(items, i) for i in indexes]
        assert roles == [START] + [CONTINUATION] * (len(indexes) - 1)
        # one header for the agent's part of the turn, with the turn's actions
        header = item_lines(transcript, indexes[0])[1]
        assert "[edit] [fork] [⟲ Rewind to here]" in header
        for index in indexes[1:]:
            first = item_lines(transcript, index)[0]
            assert first.rstrip().endswith("[⟲ Rewind to here]") and "fork" not in first and "edit" not in first
        # quiet until hovered or selected: a continuation's button is muted, then brightened
        strip = transcript._strips(indexes[1], transcript._layout_width)[0]
        quiet = [seg for seg in strip if seg.text == "[⟲ Rewind to here]"][0]
        bright = [seg for seg in transcript.marks.brighten(strip) if seg.text == "[⟲ Rewind to here]"][0]
        assert quiet.style.color != bright.style.color
        assert bright.style.color == transcript.get_component_rich_style("transcript--button").color


async def test_the_selected_turn_is_highlighted_and_fully_in_view_header_included():
    chat = offline_chat(["02_turn_plain_text", "03_turn_with_tool_call", "04_turn_three"] * 1)
    app = offline_app(chat)
    async with app.run_test(size=(100, 16)) as pilot:  # shorter than the transcript
        await pilot.pause()
        screen = app.chat_screen
        transcript = screen.transcript
        assert screen.enter_rewind_mode(0)
        await pilot.pause()
        first, end = transcript.selected_bounds()
        top, bottom = transcript._starts[first], transcript._starts[end]
        view = transcript.scrollable_content_region.height
        assert transcript.scroll_y <= top and (bottom <= transcript.scroll_y + view or transcript.scroll_y == top)
        lines = screen_lines(transcript)
        assert "rewind point" in lines[0] and lines[1].startswith("you")
        # a real highlight: the selected lines carry a background that is not the transcript's
        strip = transcript.render_line(2)
        backgrounds = {seg.style.bgcolor for seg in strip if seg.style and seg.style.bgcolor}
        assert transcript.get_component_rich_style("transcript--cursor").bgcolor in backgrounds
        assert strip.text.startswith("┃ ")
        # the turn before the selected one is drawn as it is; the selected and later ones dimmed
        await pilot.press("down")
        first, _ = transcript.selected_bounds()
        assert first > 0
        preview = transcript.get_component_rich_style("transcript--preview").color

        def colors(index: int) -> set:
            transcript._set_y(transcript._starts[index])
            y = transcript._starts[index] + 2 - int(transcript.scroll_y)  # the item's first body line
            return {seg.style.color for seg in transcript.render_line(y) if seg.text.strip() and seg.style}

        assert preview not in colors(0)
        assert colors(first) == {preview} or preview in colors(first)
        assert preview in colors(len(chat.conversation.items) - 1)


async def test_user_streaming_and_final_text_are_literal_in_their_own_lines():
    chat = offline_chat([])
    conv = chat.conversation
    conv.add_user_message(
        {"kind": "message", "role": "user", "messageId": "u1", "parts": [{"kind": "text", "text": MARKUP}]}
    )
    delta = {
        "kind": "status-update",
        "taskId": "t1",
        "contextId": "s1",
        "status": {
            "state": "working",
            "message": {
                "kind": "message",
                "role": "agent",
                "messageId": "d1",
                "taskId": "t1",
                "metadata": {"kagent_adk_partial": True, "kagent_invocation_id": "e-1"},
                "parts": [{"kind": "text", "text": MARKUP}],
            },
        },
    }
    conv.apply(classify(delta))
    final = {
        "kind": "message",
        "role": "agent",
        "messageId": "f1",
        "taskId": "t2",
        "parts": [{"kind": "text", "text": MARKUP}],
    }
    conv.apply(classify(final))
    app = offline_app(chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        kinds = [(it.role, it.streaming) for it in conv.items]
        assert kinds == [("user", False), ("agent", True), ("agent", False)]
        for index in range(3):
            body = "\n".join(item_lines(transcript, index)[1:])
            assert "\x1b" not in body and "\x07" not in body
            assert "[bold red]x[/]" in body, (index, body)
            # nothing in the item's own lines was styled bold red by markup
            for strip in transcript._strips(index, transcript._layout_width):
                for seg in strip:
                    assert not (seg.style and seg.style.color and seg.style.color.name == "red" and seg.style.bold)
        assert LITERAL.split(" *")[0] in "\n".join(item_lines(transcript, 0))
        assert "*stars*" in "\n".join(item_lines(transcript, 0)) + "\n".join(item_lines(transcript, 1))


async def test_markup_and_escapes_from_the_model_are_shown_literally(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "[bold red]x[/] \x1b[31mred\x1b[0m \x1b]52;c;Zm9v\x07")
        transcript = app.chat_screen.transcript
        user, agent = 0, 1
        assert "[bold red]x[/] red" in "\n".join(item_lines(transcript, user))
        assert "[bold red]x[/] red" in "\n".join(item_lines(transcript, agent))
        assert all("\x1b" not in line and "\x07" not in line for line in screen_lines(transcript))


def test_status_line_keeps_the_essentials_at_60_columns():
    status = Status(
        server="127.0.0.1:43125",
        agent="demo",
        dialect="1.0",
        session="1a2b3c4d-5e6f-7a8b-9c0d-112233445566",
        session_name="a long session title about the weather",
        turn="completed",
        rewind="a2a",
        mode="rewind",
    )
    wide = status_text(status, 200).plain
    assert "server 127.0.0.1:43125" in wide and "agent demo" in wide and "a long session title" in wide
    for width in (60, 50):
        text = status_text(status, width).plain
        assert len(text) <= width
        assert (
            "127" in text
            and "125" in text
            and "1a2b3c4d" in text
            and "completed" in text
            and "a2a" in text
            and "REWIND" in text
        ), text
    # a long host is shortened in the middle, not cut at the end
    status.server = "very-long-host-name.internal.example.com:8443"
    text = status_text(status, 60).plain
    assert "…" in text and text.count("8443") == 1 and "completed" in text and "1a2b3c4d" in text


async def test_nothing_is_clipped_by_the_scrollbar_at_60_columns(server):
    app = make_app(server)
    async with app.run_test(size=(60, 16)) as pilot:
        await turns(app, pilot, "a first question", "weather in Oslo", "third question here")
        transcript = app.chat_screen.transcript
        assert transcript.show_vertical_scrollbar  # the transcript outgrew the screen
        width = transcript.scrollable_content_region.width
        assert transcript._layout_width == width
        for line in screen_lines(transcript):
            assert len(line.rstrip()) <= width
        headers = [line for line in screen_lines(transcript) if "Rewind to here" in line]
        assert headers and all(line.rstrip().endswith("[⟲ Rewind to here]") for line in headers)
        status = app.chat_screen.query_one("#status").render().plain
        assert app.chat.session_id[:8] in status and "completed" in status and "a2a" in status


async def test_follows_the_bottom_after_ctrl_n_and_until_the_user_scrolls_away(server):
    app = make_app(server)
    async with app.run_test(size=(80, 16)) as pilot:
        await turns(app, pilot, "one")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        transcript = app.chat_screen.transcript
        for n in range(6):
            await send(app, pilot, f"message number {n}")
            assert transcript.scroll_y == transcript.max_scroll_y
            assert any(f"You said: message number {n}" in line for line in screen_lines(transcript))
        # the user scrolls away: new content no longer pulls the view down
        bottom = transcript.scroll_y
        await pilot.press("pageup")  # the composer has focus and keeps it: PgUp scrolls the conversation
        assert app.focused is app.chat_screen.composer
        assert not transcript.follow and transcript.scroll_y < bottom
        transcript.focus()
        await pilot.press("pageup")
        assert not transcript.follow
        # a send of one's own while reading above follows the new turn (issue 33: it did not); a
        # reply streaming in while reading above does not pull the view (test_habits_state, 6)
        await send(app, pilot, "while reading above")
        assert transcript.follow and transcript.scroll_y == transcript.max_scroll_y
        # scrolled away again, then back at the bottom: it follows again
        transcript.focus()
        await pilot.press("pageup")
        assert not transcript.follow
        await pilot.press("pagedown", "pagedown", "pagedown")
        assert transcript.follow
        await send(app, pilot, "and now")
        assert transcript.scroll_y == transcript.max_scroll_y


async def test_whole_messages_from_a_server_that_does_not_stream_stay_in_view():
    chat = offline_chat(["02_turn_plain_text"])
    app = offline_app(chat)
    async with app.run_test(size=(80, 14)) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        transcript = screen.transcript
        conv = chat.conversation
        for n in range(8):
            # a whole answer in one event, with Markdown whose drawn height differs from its estimate
            text = f"# Answer {n}\n\n- point one\n- point two\n\n```\ncode {n}\n```\nlast line {n}"
            screen.chat.listener(
                conv.add_user_message(
                    {
                        "kind": "message",
                        "role": "user",
                        "messageId": f"u{n}",
                        "parts": [{"kind": "text", "text": f"q{n}"}],
                    }
                )
            )
            message = {
                "kind": "message",
                "role": "agent",
                "messageId": f"a{n}",
                "taskId": f"t{n}",
                "parts": [{"kind": "text", "text": text}],
            }
            screen.chat.listener(conv.apply(classify(message)))
            await pilot.pause()
            assert any(f"last line {n}" in line for line in screen_lines(transcript)), n
            assert transcript.scroll_y == transcript.max_scroll_y


async def test_a_session_opens_at_its_latest_turn():
    chat = offline_chat(["02_turn_plain_text", "03_turn_with_tool_call", "04_turn_three"] * 1)
    for n in range(6):
        replay(chat, "02_turn_plain_text")  # more of the same: duplicates are dropped, but fine
        chat.conversation.add_error(f"note {n}\n\n- a\n- b\n\n> quoted {n}")
    app = RewindApp(chat=chat)
    async with app.run_test(size=(80, 14)) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        assert any("quoted 5" in line for line in screen_lines(transcript))
        assert transcript.scroll_y == transcript.max_scroll_y > 0
