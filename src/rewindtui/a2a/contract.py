"""The rewind wire contract, written once.

Every name a client and a server must agree on for rewind, rewind-and-send, fork (and redo) over
A2A and REST lives here and nowhere else: the agent-card extension and its params, the control
message's metadata key, the flag on the Task that carries a session's effective history, the
metadata the server puts on that Task, and the REST routes and body keys.

This module is pure data with no imports, so the client (``rewindtui.client.a2a_client``), the embedded
server (``rewindtui.server``) and the kagent add-on's tests (which must not import rewindtui) can
all read it; ``tests/test_contract.py`` checks both sides against it.
"""

#: The A2A agent-card extension (``capabilities.extensions[].uri``) by which a server says it
#: implements rewind. Its ``params`` use the ``PARAM_*`` keys below.
EXTENSION_URI = "urn:rewindtui:ext:rewind:v1"

#: ``params.rewind``: a list of the ways rewind can be asked for (``"a2a"``, ``"rest"``).
PARAM_REWIND = "rewind"
#: ``params.fork``: true when ``POST {api}/sessions/{id}/fork`` exists.
PARAM_FORK = "fork"
#: ``params.redo``: true when ``POST {api}/sessions/{id}/redo`` exists (undo of a rewind).
PARAM_REDO = "redo"
#: ``params.api``: the REST base URL of the rewind, fork and redo routes.
PARAM_API = "api"
#: ``params.metadata_key``: the message metadata key of the control message (default below).
PARAM_METADATA_KEY = "metadata_key"
#: ``params.newest_task``: true when ``GET {api}/sessions/{id}/tasks?limit=1`` answers the session's
#: newest task and every turn, rewind, redo and fork makes a new task -- so its id is a cheap
#: revision of the session (the client checks it before acting; see ``rewindtui.client.freshness``).
PARAM_NEWEST_TASK = "newest_task"
#: ``params.starting``: true on a card the server answered while its agent runtime was still
#: loading (its front, ``rewindtui.server.http.front``): the first turn waits for it, so a client
#: says "starting the agent…" until that turn's first event. Absent once the agent is loaded.
PARAM_STARTING = "starting"
#: ``params.state``: true when ``GET {api}/sessions/{id}/state`` answers the agent's session state
#: and what a rewind to before each turn would change in it (:data:`REST_STATE`).
PARAM_STATE = "state"

#: The ways rewind can travel.
MODE_A2A = "a2a"
MODE_REST = "rest"
MODES = (MODE_A2A, MODE_REST)

#: The seeds' control message: a user message whose ``metadata`` holds this key, set to the
#: invocation id to rewind before. Empty text: rewind only; text: rewind, then run it as a turn.
REWIND_METADATA_KEY = "kagent_rewind_before_invocation_id"

#: Task metadata: this Task's history is the session's whole effective history (the answer to a
#: rewind or a fork), so a client replaces its view with it instead of merging it as one turn.
EFFECTIVE_HISTORY_KEY = "rewindtui_effective_history"
#: Task metadata on a rewind's (or redo's) Task: how many messages the session's effective history
#: holds. A client may ask for only the newest N of them (over A2A the request's own
#: ``SendMessageConfiguration.historyLength``, over REST :data:`REST_HISTORY_LENGTH_FIELD`); the
#: answer's history is then that tail, and the client joins it to the view it kept -- when the
#: count and the message ids show the join (else it re-reads the session). A server that does not
#: bound the answer sends the whole history.
EFFECTIVE_HISTORY_TOTAL_KEY = "rewindtui_effective_history_total"
#: Task metadata on a rewind's Task: the invocation it rewound before ...
REWOUND_BEFORE_KEY = "rewindtui_rewind_before_invocation_id"
#: ... and the invocation id of the rewind itself (ADK's rewind event).
REWIND_INVOCATION_KEY = "rewindtui_rewind_invocation_id"
#: Task metadata on a redo's Task (a rewind that undid an earlier one): the id of the rewind Task
#: it undid. Its ``REWOUND_BEFORE_KEY`` is that rewind's own invocation id (ADK's rewind event).
REDO_OF_KEY = "rewindtui_redo_of"
#: A tool call's data part (its ``metadata``): what running the tool does besides answering, as the
#: server that ran it declares it. ``"outside"``: it acts outside the agent (a file, a mail, a
#: ticket), which a rewind does not undo; ``"session"``: it changes nothing or only the session's
#: own state, which a rewind takes back. A call without the key may have had outside effects.
TOOL_EFFECTS_KEY = "rewindtui_tool_effects"
EFFECTS_OUTSIDE = "outside"
EFFECTS_SESSION = "session"
#: Status/event metadata on a refused request: a short machine-readable reason code.
ERROR_CODE_KEY = "rewindtui_error"
#: The reason codes (``ERROR_CODE_KEY``) of the embedded server's refusals and failures; the
#: kagent-rewind add-on keeps a copy of the ones it uses, checked name by name and value by value.
CODE_INTERNAL = "internal"
CODE_BAD_REQUEST = "bad_request"
#: the rewind/fork target is not (or no longer) an effective turn of the session
CODE_INVALID_INVOCATION = "invalid_invocation"
CODE_NOT_FOUND = "not_found"
#: a turn (or another rewind/fork) is running on the session
CODE_BUSY = "session_busy"
CODE_CONFLICT = "conflict"
CODE_SHUTTING_DOWN = "shutting_down"
#: the data directory cannot take a write (locked, read-only, failing) ...
CODE_STORAGE_UNAVAILABLE = "storage_unavailable"
#: ... or is full
CODE_STORAGE_FULL = "storage_full"
#: a rewind/fork/turn reached the agent but not the store; it is finished before new work
CODE_RECOVERY_PENDING = "recovery_pending"

#: Task metadata of a rewound task (listed with ``REST_INCLUDE_REWOUND``): true ...
REWOUND_KEY = "rewindtui_rewound"
#: ... the id of the rewind (or redo) Task that took it out of the conversation ...
REWOUND_BY_TASK_KEY = "rewindtui_rewound_by"
#: ... and when (ISO 8601, UTC).
REWOUND_AT_KEY = "rewindtui_rewound_at"
#: Message metadata on an agent message whose event changed the session's state: the state keys
#: it changed (a tool that changed state; a rewind takes that change back).
STATE_CHANGED_KEY = "rewindtui_state_changed"
#: Message metadata: the part of a reply streamed before the user stopped the turn (the server kept
#: what it had streamed; the message ends there).
STOPPED_KEY = "rewindtui_stopped"
#: Task metadata on a rewind's (or redo's) Task: how many turns it took out of the conversation.
REWOUND_TURNS_KEY = "rewindtui_rewound_turns"

#: kagent's system event: it has an invocation id but is never a rewind target.
HEADER_UPDATE_INVOCATION = "header_update"

#: REST routes, relative to ``params.api`` (``{id}`` is the session id, path-escaped).
REST_REWIND = "/sessions/{id}/rewind"
REST_FORK = "/sessions/{id}/fork"
REST_REDO = "/sessions/{id}/redo"
#: The JSON body key of the rewind and fork routes. Fork also takes an invocation that was
#: rewound, or a rewind's own invocation: the new session is the original as it was just before it.
REST_BEFORE_FIELD = "rewind_before_invocation_id"
#: google-adk's own field of a rewind event (``EventActions.rewind_before_invocation_id``, google-adk
#: 2.13 ``events/event_actions.py``): the same name as the REST field, read from ADK's stored events
ADK_REWIND_ACTION = REST_BEFORE_FIELD
#: The JSON body key of the rewind and redo routes (optional): answer with at most this many of the
#: effective history's newest messages (a whole number, 0 or more; see
#: :data:`EFFECTIVE_HISTORY_TOTAL_KEY`). Also a query parameter of ``GET {api}/sessions/{id}/tasks``:
#: each listed task's history cut to its newest messages (0: none) -- the newest-task check asks
#: for none, as a rewind's Task holds the whole effective history.
REST_HISTORY_LENGTH_FIELD = "history_length"
#: The JSON body key of the redo route: the id of the rewind (or redo) Task to undo -- the session
#: goes back to just before it. Without it: the last rewind, if no turn was sent since.
REST_REDO_FIELD = "rewind_task_id"
#: Query parameter of ``GET {api}/sessions/{id}/tasks`` that includes rewound tasks.
REST_INCLUDE_REWOUND = "include_rewound"
#: The session-state route (:data:`PARAM_STATE`). Its ``data``: ``{"state": {key: value}, "rewind_changes":
#: {invocation id: {key: value, or null for a key the rewind removes}}}`` -- for each of the newest
#: turns, the state delta ADK's rewind to before that turn would apply (keys it leaves alone are
#: not listed; ``app:``, ``user:`` and ``temp:`` keys, which a rewind leaves, are not either).
REST_STATE = "/sessions/{id}/state"
STATE_FIELD = "state"
REWIND_CHANGES_FIELD = "rewind_changes"
#: Query parameters of ``GET {api}/sessions/{id}/tasks`` that page it (without them: every task):
#: at most ``limit`` of the newest tasks (still oldest first in ``data``) ...
REST_TASKS_LIMIT = "limit"
#: ... older than the page whose answer gave this token (the envelope's ``REST_NEXT_PAGE_FIELD``,
#: "" on the oldest page).
REST_TASKS_BEFORE = "before"
REST_NEXT_PAGE_FIELD = "next_page_token"
#: Task metadata of the first task of a fork (the embedded server's fork marker: the history it was
#: copied with): the session it was forked from. It is no rewind of this session: nothing to undo.
FORK_TASK_FORKED_FROM_KEY = "rewindtui_forked_from"
#: Session fields (``GET {api}/sessions``): where a fork came from (a session id) ...
SESSION_FORKED_FROM_FIELD = "forked_from"
#: ... and at which of that session's turns it branched off (1-based: the turn it was forked before);
SESSION_FORK_TURN_FIELD = "forked_at_turn"
#: how many branches of turns were rewound in the session (kept on the server, restorable).
SESSION_BRANCHES_FIELD = "rewound_branches"
