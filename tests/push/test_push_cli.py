"""``rewindtui send --push``: a slow turn whose stream is cut, and whose server cannot be reached
again through the same way (the fault proxy answers 503 to the resume and the re-read), is still
printed -- from the push notification the embedded server sends to the CLI's loopback receiver
when the turn ends. Without ``--push`` the same fault ends in "interrupted" (exit 1)."""

from __future__ import annotations

import pytest
from proxy import Fault, FaultProxy, is_turn

from clirun import isolate, runner
from kit.servers import embedded_fixture

pytestmark = pytest.mark.timeout(120)


slow = embedded_fixture("push-cli", scope="module", demo_delay=0.1)


@pytest.fixture
def proxy(slow):
    with FaultProxy(slow.base_url) as p:
        yield p


def cut_and_unreachable(proxy: FaultProxy) -> None:
    turn = proxy.add(Fault(is_turn, live=True, cut_after=3, how="chunked"))
    proxy.add(
        Fault(lambda req: turn.hits > 0 and not is_turn(req), times=10_000, status=503, body=b'{"error": "down"}')
    )


@pytest.mark.parametrize("push", [True, False])
def test_send_push_prints_a_cut_turn_when_it_ends(slow, proxy, tmp_path, monkeypatch, capsys, push):
    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", proxy.rewrite(slow.agent_url), "--api", proxy.rewrite(slow.api_url))
    cut_and_unreachable(proxy)
    words = "a long answer to wait for " * 4
    flags = ["--push", "--push-wait", "60"] if push else []
    result = run("send", "--json", *flags, words)
    if not push:
        assert result.rc == 1 and "interrupted" in result.out + result.err
        return
    assert result.rc == 0, result.err
    assert "waiting for its push notification" in result.err
    records = result.records()
    texts = " ".join(str(r.get("text", "")) for r in records)
    assert words.strip() in texts
    session = records[0]["session"]
    # what was printed is what the server holds
    proxy.clear()
    truth = run("history", "--json", "--session", session)
    held = " ".join(str(r.get("text", "")) for r in truth.records())
    assert words.strip() in held
