"""run_app's exit status: an app that ends on an error exits non-zero (Textual's run() then
returns None and keeps the status in ``return_code``); an app that ends cleanly exits 0. The app
runs for real (headless), the error injected into its mount."""

from __future__ import annotations

import pytest

from rewindtui.config.settings import Settings
from rewindtui.tui import app as app_module

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def headless(monkeypatch):
    real_run = app_module.RewindApp.run
    monkeypatch.setattr(
        app_module.RewindApp, "run", lambda self, **kw: real_run(self, headless=True, size=(80, 24), **kw)
    )


def _settings(tmp_path) -> Settings:
    return Settings(url="http://127.0.0.1:9/", data_dir=tmp_path)  # never reached: the app ends first


def test_an_app_that_ends_on_an_error_exits_non_zero(headless, monkeypatch, tmp_path, capsys):
    async def crash(self) -> None:
        raise RuntimeError("injected: the app fails while mounting")

    monkeypatch.setattr(app_module.RewindApp, "on_mount", crash)
    assert app_module.run_app(_settings(tmp_path)) == 1
    assert "injected: the app fails while mounting" in capsys.readouterr().err  # Textual's report


def test_an_app_that_ends_cleanly_exits_zero(headless, monkeypatch, tmp_path):
    async def leave(self) -> None:
        self.exit()

    monkeypatch.setattr(app_module.RewindApp, "on_mount", leave)
    assert app_module.run_app(_settings(tmp_path)) == 0
