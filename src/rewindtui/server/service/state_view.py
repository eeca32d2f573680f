"""The agent's session state, as ``GET /api/sessions/{id}/state`` answers it (``contract.REST_STATE``):
ADK's session state now, and for each of the newest turns what a rewind to before it would change
in it -- the state delta ADK's own rewind computes (``Runner._compute_state_delta_for_rewind``, the
function ``Runner.rewind_async`` hands to ``sessions._rewind_utils.rewind_session``), so what the
screen says is what the rewind would apply. Read only: nothing is appended."""

from __future__ import annotations

from typing import Any

from rewindtui.a2a import contract
from rewindtui.server.service.context import UsesContext
from rewindtui.server.shared.wire import json_safe
from rewindtui.server.storage.store_rows import SessionRow

#: the newest turns a delta is computed for (each is one pass over the session's events)
MAX_TURNS = 100


class StateView(UsesContext):
    async def state(self, session: SessionRow) -> dict[str, Any]:
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        if adk is None:
            return {contract.STATE_FIELD: {}, contract.REWIND_CHANGES_FIELD: {}}
        # the first event of each invocation: where ADK's rewind cuts (rewind_session's own search)
        first: dict[str, int] = {}
        for index, event in enumerate(adk.events):
            if event.invocation_id and event.actions.rewind_before_invocation_id is None:
                first.setdefault(event.invocation_id, index)
        newest = sorted(first.items(), key=lambda pair: pair[1])[-MAX_TURNS:]
        changes: dict[str, Any] = {}
        for invocation, index in newest:
            delta = await self.runner._compute_state_delta_for_rewind(adk, index)
            changes[invocation] = json_safe(delta)
        return {contract.STATE_FIELD: json_safe(dict(adk.state)), contract.REWIND_CHANGES_FIELD: changes}
