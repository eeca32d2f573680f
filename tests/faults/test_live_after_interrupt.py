"""A turn whose stream was cut while its server was away (a team replica killed mid-turn: the
stream ends, the re-read fails) shows as interrupted, "the server cannot say how the turn ended".
Once the server answers again and has the turn's ending, the live view re-reads the session: the
view is the server's, not an interruption left standing. The real embedded server behind the fault
proxy (tests/faults/proxy.py)."""

from __future__ import annotations

import pytest
from faultkit import view
from proxy import Fault, is_rpc, is_turn

from rewindtui.chat import TurnInterrupted
from rewindtui.chat.live import LiveWatch
from rewindtui.model import INTERRUPTED

pytestmark = pytest.mark.timeout(60)
#: a server that cannot resume a stream (as test_turn_faults.py's no_resubscribe)
SUBSCRIBE = ("SubscribeToTask", "tasks/resubscribe")
NOT_OFFERED = b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "not supported"}}'


async def test_an_interrupted_turn_the_server_ended_since_is_re_read(make_chat, proxy, truth):
    mine = await make_chat()
    await mine.open(None)
    await mine.send("first")
    sid = mine.session_id
    proxy.add(Fault(is_rpc(*SUBSCRIBE), times=100, status=200, body=NOT_OFFERED))
    proxy.add(Fault(is_turn, cut_after=2, how="chunked"))
    # every other request meanwhile finds the server away (as a killed replica's clients do)
    proxy.add(Fault(lambda req: not is_turn(req), times=1000, status=503, body=b'{"error": "away"}'))
    with pytest.raises(TurnInterrupted, match="cannot say how the turn ended"):
        await mine.send("second")
    assert mine.conversation.turn_state == INTERRUPTED
    proxy.clear()  # the server is back, and has ended the turn (completed, here)
    watch = LiveWatch(mine)
    followed = await watch.check()
    assert followed is not None
    assert mine.conversation.turn_state != INTERRUPTED
    assert view(mine.conversation) == await truth(sid)
    assert await watch.check() is None  # seen once
