"""Answering a form an agent sent (``/form``): the newest data part of the conversation that holds
a JSON schema form (:mod:`rewindtui.a2a.forms`) as fields to fill in. **Attach** checks the
answer (required fields, numbers, choices) and puts it in the composer's attachment bar as a data
part: Enter then sends it, with any text, as the next turn -- nothing is sent from here. Esc
leaves the form; nothing changes.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from rewindtui.a2a.forms import Form, answer, latest_form
from rewindtui.base.textsafe import sanitize, sanitize_line


class FormAnswerScreen(ModalScreen[dict[str, Any] | None]):
    CSS_PATH = "form_answer.tcss"
    BINDINGS = [Binding("escape", "dismiss_form", "Close", id="form.close")]

    def __init__(self, form: Form) -> None:
        super().__init__()
        self.form = form

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form-box"):
            yield Static(Text("The agent asks you to fill in a form", style="bold"), id="form-title")
            if self.form.instructions:
                yield Static(Text(sanitize(self.form.instructions)), id="form-instructions")
            for i, f in enumerate(self.form.fields):
                mark = " *" if f.required else ""
                yield Static(
                    Text(
                        sanitize_line(f"{f.title}{mark}")
                        + (f" — {sanitize_line(f.description)}" if f.description else "")
                    ),
                    classes="form-label",
                )
                if f.kind == "boolean":
                    yield Checkbox(sanitize_line(f.title), value=bool(f.value), id=f"form-field-{i}")
                else:
                    placeholder = f.hint or (" | ".join(f.choices) if f.choices else f.kind)
                    value = "" if f.value is None else str(f.value)
                    if f.kind == "integer":
                        yield Input(
                            value=value, placeholder=sanitize_line(placeholder), type="integer", id=f"form-field-{i}"
                        )
                    elif f.kind == "number":
                        yield Input(
                            value=value, placeholder=sanitize_line(placeholder), type="number", id=f"form-field-{i}"
                        )
                    else:
                        yield Input(value=value, placeholder=sanitize_line(placeholder), id=f"form-field-{i}")
            yield Static("", id="form-problems")
            yield Button("Attach the answer", id="form-attach", variant="primary")
            yield Static(
                "The answer goes into the attachment bar as a data part; Enter in the composer sends it. Esc leaves.",
                id="form-hint",
            )

    def on_mount(self) -> None:
        if self.form.fields:
            self.query_one(f"#form-field-{0}").focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, f in enumerate(self.form.fields):
            widget = self.query_one(f"#form-field-{i}")
            out[f.name] = widget.value  # type: ignore[attr-defined]
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "form-attach":
            self.attach()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.attach()

    def attach(self) -> None:
        result, problems = answer(self.form, self.values())
        if problems:
            self.query_one("#form-problems", Static).update(Text("Not yet: " + "; ".join(problems)))
            return
        self.dismiss(result)

    def action_dismiss_form(self) -> None:
        self.dismiss(None)


def open_latest(app: Any) -> None:
    """``/form``: open the newest form of the conversation; its answer lands in the attachment bar."""
    from rewindtui.client.attachments import DataAttachment
    from rewindtui.tui.widgets.attachment_bar import AttachmentBar

    chat = app.chat
    items = chat.conversation.items if chat is not None else []
    form = latest_form(
        [list(i.other_parts) for i in items if i.role != "user" and i.rewound is None and i.raw is not None]
    )
    if form is None:
        app.notify("No form to answer: the agent has sent no data part holding a form.", title="Form", markup=False)
        return

    def answered(result: dict[str, Any] | None) -> None:
        if result is None:
            return
        app.chat_screen.query_one(AttachmentBar).add(DataAttachment(result))
        app.notify("The form's answer is attached as a data part: Enter sends it.", title="Form", markup=False)

    app.push_screen(FormAnswerScreen(form), answered)
