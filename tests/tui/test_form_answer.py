"""A data part holding a JSON schema form (the A2A samples' expense form) is answered as a data
part: /form shows its fields, the answer is checked, attached, and sent with Enter; the agent (an
a2a-sdk server) receives it. And the form logic without the app."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from form_servers import FORM, FormExecutor, form_app

from kit.apps import app_at
from kit.pilot import send, settle, wait_until
from rewindtui.a2a.forms import answer, form_of
from rewindtui.tui.screens.form_answer import FormAnswerScreen


def test_the_samples_form_is_read_and_checked():
    import json

    form = form_of(json.dumps(FORM))  # the sample sends it as a JSON text
    assert form is not None and [f.name for f in form.fields] == ["date", "amount", "purpose", "request_id"]
    date = form.fields[0]
    assert date.required and date.value is None and date.hint == "<transaction date>"
    assert form.fields[3].value == "request_id_1234567"
    values, problems = answer(form, {"date": "2026-11-28", "amount": "", "purpose": "taxi", "request_id": "r"})
    assert problems == ["Amount: required"] and "amount" not in values
    assert form_of({"type": "form"}) is None and form_of({"x": 1}) is None and form_of("not json") is None


def test_a_data_part_holding_a_form_says_how_to_fill_it_in():
    """The transcript's drawing of a data part: the sample's form (as a JSON text and as an
    object) gets the /form hint under its heading; other data gets none."""
    import json

    from rich.style import Style

    from rewindtui.tui.widgets.part_view import FORM_HINT, PartStyles, render_parts

    styles = PartStyles(Style(), Style(), Style(), Style())

    def drawn(data) -> list[str]:
        return [str(r) for r in render_parts([{"data": data}], styles, expanded=False, savable=True)]

    for form in (json.dumps(FORM), FORM):
        lines = drawn(form)
        assert lines[1] == FORM_HINT and "/form" in FORM_HINT
    assert FORM_HINT not in drawn({"type": "form"}) and FORM_HINT not in drawn({"answer": 42})


@pytest.mark.slow
async def test_a_form_is_answered_as_a_data_part(tmp_path):
    from asgi_thread import ServeInThread

    executor = FormExecutor()
    served = ServeInThread(factory=lambda url: form_app(url + "/", executor)).start()
    try:
        app = app_at(served.url + "/", local_store=tmp_path / "sessions.db")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await send(app, pilot, "expense please")
            from kit.pilot import screen_lines
            from rewindtui.tui.widgets.part_view import FORM_HINT

            assert any(FORM_HINT[:40] in line for line in screen_lines(app.chat_screen.transcript))  # the hint
            app.chat_screen.query_one("Composer").text = "/form"
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, FormAnswerScreen))
            screen = app.screen
            names = [f.name for f in screen.form.fields]
            assert names == ["date", "amount", "purpose", "request_id"]  # the schema's required order

            def field(name: str):
                return screen.query_one(f"#form-field-{names.index(name)}")

            assert (
                field("request_id").value == "request_id_1234567" and field("date").placeholder == "<transaction date>"
            )
            field("date").value = "2026-11-28"
            field("purpose").value = "taxi"
            screen.attach()  # amount is missing: refused, said on the form
            await pilot.pause()
            assert isinstance(app.screen, FormAnswerScreen) and "Amount: required" in str(
                screen.query_one("#form-problems").render()
            )
            field("amount").value = "42.50"
            await pilot.click("#form-attach")
            await wait_until(pilot, lambda: not isinstance(app.screen, FormAnswerScreen))
            assert executor.received == []  # attached, not sent
            await send(app, pilot, "here it is")
            await wait_until(pilot, lambda: bool(executor.received))
            assert executor.received == [
                {"date": "2026-11-28", "amount": "42.50", "purpose": "taxi", "request_id": "request_id_1234567"}
            ]
            await wait_until(
                pilot, lambda: any("Reimbursed 42.50 for taxi" in i.text for i in app.chat.conversation.items)
            )
    finally:
        served.stop()
