"""Push notifications in the app (Pilot, real HTTP over loopback, the embedded server's push
sender): with push on, a turn whose stream is cut mid-turn -- and whose server cannot be reached
again for a while (the fault proxy answers 503 to the resume and the re-read) -- is shown
finished when the embedded server's notification reaches the app's loopback receiver: a toast,
and the turn re-read from the server. A turn streamed to its end shows no toast."""

from __future__ import annotations

from pathlib import Path

import pytest
from proxy import Fault, FaultProxy, is_turn

from kit.pilot import notifications, send, settle, wait_until
from rewindtui.client.push import receiver_of
from rewindtui.config.connection import AppConnector
from rewindtui.config.settings import load_settings
from rewindtui.model.items import ItemKind
from rewindtui.tui.app import RewindApp

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # each test runs for seconds (a slow demo turn)


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(tmp_path_factory.mktemp("push-app"), demo_delay=0.1) as srv:
        yield srv


@pytest.fixture
def proxy(slow):
    with FaultProxy(slow.base_url) as p:
        yield p


def _app(slow, proxy: FaultProxy, tmp_path: Path, push: bool) -> RewindApp:
    config = tmp_path / "config.toml"
    config.write_text(f"push = {'true' if push else 'false'}\n", encoding="utf-8")
    settings = load_settings(
        {"url": proxy.rewrite(slow.agent_url), "api": proxy.rewrite(slow.api_url)},
        {"REWINDTUI_CONFIG": str(config)},
    )
    # the live view off: with it, the app re-reads the session by itself once the network is back,
    # which is another way to the same end (tests/tui/test_live_view.py); this test is the push's
    app = RewindApp(AppConnector(settings), new_session=True, live=False)
    app.animation_level = "none"
    return app


def _agent_texts(app: RewindApp) -> str:
    assert app.chat is not None
    return " ".join(
        i.text for i in app.chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "agent" and i.text
    )


@pytest.mark.parametrize("network_back", [True, False])
async def test_a_cut_turn_is_shown_finished_when_its_push_arrives(slow, proxy, tmp_path, network_back):
    app = _app(slow, proxy, tmp_path, push=True)
    words = "a long answer to wait for " * 4
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.chat is not None, 30)
        await settle(app, pilot)
        assert app.push_notices is not None and app.push_notices.on
        # the turn's stream is cut after a few frames; the resume and the re-read get 503
        turn = proxy.add(Fault(is_turn, live=True, cut_after=3, how="chunked"))
        down = proxy.add(
            Fault(lambda req: turn.hits > 0 and not is_turn(req), times=10_000, status=503, body=b'{"error": "down"}')
        )
        await send(app, pilot, words)
        assert app.chat is not None
        await wait_until(pilot, lambda: app.chat.conversation.turn_state == "interrupted", 30)
        assert any("interrupted" in str(n).lower() for n in notifications(app))
        assert words.strip() not in _agent_texts(app)  # the cut stream did not bring the whole reply
        assert down.hits > 0
        if network_back:
            proxy.clear()  # the network is back; nothing in the app asks the server again by itself
        await wait_until(pilot, lambda: bool(app.push_notices.shown), 60)
        await settle(app, pilot)
        task_id, toast = app.push_notices.shown[0]
        how = (
            "re-read from the server" if network_back else "shown from the notification (the server could not be read)"
        )
        assert f"finished on the server while its stream was cut: it ended completed; {how}" in toast
        assert any(toast == str(n) for n in notifications(app))
        assert words.strip() in _agent_texts(app)
        assert app.chat.conversation.turn_state != "interrupted"
        if network_back:  # the re-read went to the server through the proxy
            assert proxy.seen_by(lambda req: "/sessions/" in req.path)


async def test_a_turn_streamed_to_its_end_shows_no_push_toast(slow, proxy, tmp_path):
    app = _app(slow, proxy, tmp_path, push=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.chat is not None, 30)
        await settle(app, pilot)
        receiver = receiver_of(app.chat.client)
        assert receiver is not None
        await send(app, pilot, "short one")
        await wait_until(pilot, lambda: len(receiver.tasks) == 1, 30)  # the notification came ...
        await settle(app, pilot)
        assert app.push_notices.shown == []  # ... and said nothing: the app saw the turn end


async def test_push_off_starts_no_receiver(slow, proxy, tmp_path):
    app = _app(slow, proxy, tmp_path, push=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.chat is not None, 30)
        await settle(app, pilot)
        assert app.push_notices is not None and not app.push_notices.on
        assert app.chat.client.push_config is None
