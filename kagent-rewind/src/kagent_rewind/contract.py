"""The rewind wire names this add-on speaks.

They are the same names as rewindtui's wire contract (``src/rewindtui/a2a/contract.py`` in the
rewindtui repository). The add-on keeps its own copy, because it runs inside a kagent agent and
must not depend on rewindtui; its tests load rewindtui's contract file by path and check that every
name defined in both has the same value.
"""

#: The A2A agent-card extension (``capabilities.extensions[].uri``) that says rewind is supported.
EXTENSION_URI = "urn:rewindtui:ext:rewind:v1"
#: ``params.rewind``: the ways rewind can be asked for; this add-on takes the A2A control message.
PARAM_REWIND = "rewind"
#: ``params.metadata_key``: the metadata key of the control message.
PARAM_METADATA_KEY = "metadata_key"
MODE_A2A = "a2a"
#: ``params.redo``: a rewind can be undone. This add-on takes it over A2A: the control message
#: naming the invocation of the rewind's own ADK event (``REWIND_INVOCATION_KEY``) brings back
#: what that rewind took away, as rewindtui's embedded server does (ADK's ``rewind_async`` before
#: the rewind event's invocation).
PARAM_REDO = "redo"

#: The control message: a user message whose ``metadata`` holds this key, set to the invocation id
#: to rewind before. No text: rewind only. Text: rewind, then run the text as the next turn.
REWIND_METADATA_KEY = "kagent_rewind_before_invocation_id"

#: Task metadata: this Task's history is the session's whole effective history.
EFFECTIVE_HISTORY_KEY = "rewindtui_effective_history"
#: Task metadata on a rewind's Task: the invocation it rewound before ...
REWOUND_BEFORE_KEY = "rewindtui_rewind_before_invocation_id"
#: ... and the invocation id of ADK's rewind event.
REWIND_INVOCATION_KEY = "rewindtui_rewind_invocation_id"
#: Task metadata on a redo's Task: the id of the rewind Task it undid.
REDO_OF_KEY = "rewindtui_redo_of"
#: Status metadata on a refused request: a short machine-readable reason code.
ERROR_CODE_KEY = "rewindtui_error"

#: kagent's per-turn system event: it has an invocation id but is never a rewind target.
HEADER_UPDATE_INVOCATION = "header_update"

# -- this add-on's own names (not part of the shared contract) ------------------------------------
#: Metadata of a stored task whose messages a rewind took out of its history: the messages taken
#: out (A2A JSON, oldest first). Nothing is deleted: rewound turns stay readable here.
REWOUND_HISTORY_KEY = "kagent_rewind_rewound_history"
#: ... the task's artifacts, when its whole turn was rewound.
REWOUND_ARTIFACTS_KEY = "kagent_rewind_rewound_artifacts"
#: ... and the ids of the rewind Tasks that took them out.
REWOUND_BY_KEY = "kagent_rewind_rewound_by"
#: ... and, per rewind, what it moved out of the task (``{"by", "history", "status", "artifacts"}``),
#: so that a redo of that rewind puts exactly those back.
REWOUND_SEGMENTS_KEY = "kagent_rewind_rewound_segments"
#: Metadata of a rewind's Task when the session was rewound but its stored tasks could not all be
#: rewritten (a reload may then still show rewound turns).
STORE_ERROR_KEY = "kagent_rewind_store_error"

#: Reason codes of refusals (``ERROR_CODE_KEY``), as rewindtui's embedded server uses them.
CODE_INVALID_INVOCATION = "invalid_invocation"
CODE_NOT_FOUND = "not_found"
CODE_BUSY = "session_busy"
CODE_BAD_REQUEST = "bad_request"
CODE_INTERNAL = "internal"
