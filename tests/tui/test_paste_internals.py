"""The private Textual names ``rewindtui.tui.paste`` leans on (Textual has no public API for its
input parser): this fails loudly on a Textual upgrade that changes one of them, the way
``tests/server/test_internals.py`` does for ADK's private names."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest
from textual import events
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

from rewindtui.tui.paste import PASTE_END, PASTE_START, PRIVATE_NAMES, PasteSafeDriver, PasteSafeParser


def resolve(module: str, path: str) -> Any:
    target: Any = importlib.import_module(module)
    for name in path.split("."):
        target = getattr(target, name)
    return target


@pytest.mark.parametrize("module, path", PRIVATE_NAMES)
def test_private_names_we_use_still_exist(module: str, path: str) -> None:
    assert callable(resolve(module, path)), f"{module}.{path} is gone: see rewindtui/tui/paste.py"


def test_the_parser_is_still_built_and_fed_as_paste_py_assumes() -> None:
    """``PasteSafeParser(debug)`` overrides ``feed(data)`` and ``tick()``; ``PasteSafeDriver``
    replaces ``LinuxDriver.run_input_thread``, which builds ``XTermParser(self._debug)`` and hands
    every parsed event to ``process_message``. A Textual that does this differently needs
    ``paste.py`` looked at again."""
    parser_cls = resolve("textual._xterm_parser", "XTermParser")
    assert PasteSafeParser.__mro__[1] is parser_cls
    assert list(inspect.signature(parser_cls.__init__).parameters) == ["self", "debug"]
    assert list(inspect.signature(parser_cls.feed).parameters) == ["self", "data"]
    assert list(inspect.signature(parser_cls.tick).parameters) == ["self"]
    assert "self._debug = debug" in inspect.getsource(Driver.__init__)
    upstream = inspect.getsource(LinuxDriver.run_input_thread)
    for step in (
        "XTermParser(self._debug)",
        "parser.feed",
        "parser.tick",
        "self.process_message(event)",
        "self.exit_event",
    ):
        assert step in upstream, f"LinuxDriver.run_input_thread no longer has {step!r}: see rewindtui/tui/paste.py"
    assert PasteSafeDriver.run_input_thread is not LinuxDriver.run_input_thread


def test_textual_still_reads_escapes_inside_a_paste_as_keys() -> None:
    """Why ``paste.py`` exists. When Textual's own parser keeps a paste whole, this fails: the
    workaround (and its private names) can go."""
    parser_cls = resolve("textual._xterm_parser", "XTermParser")
    pasted = "red \x1b[31mtext\x1b[0m"
    out = list(parser_cls().feed(f"{PASTE_START}{pasted}{PASTE_END}"))
    assert [e.text for e in out if isinstance(e, events.Paste)] != [pasted]
