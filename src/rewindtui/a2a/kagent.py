"""kagent's controller REST API, as its Go code shapes it (pure data, no imports).

Read from kagent-dev/kagent's release branch ``release/v0.10.x`` at its tip
03e950f6e90764dfc24e12af71df5b3685c31b5c (the files as last changed there:
``go/core/internal/httpserver/server.go`` 8fc5f3b4c, ``handlers/sessions.go`` 41279fd56,
``go/core/internal/utils/a2a_version.go`` d39fa0b16), checked against ae5a948 on ``main`` (the last
commit before sessions moved to gRPC): ``go/core/internal/httpserver/server.go`` (routes),
``handlers/sessions.go`` and ``handlers/tasks.go`` (shapes), ``go/api/httpapi/types.go`` (the
envelope), ``middleware_error.go`` (errors), ``httpserver/auth/authn.go`` (the user).

- Success is ``{"error": false, "data": ..., "message": "..."}``; ``data`` has ``omitempty``, so an
  empty list comes back with no ``data`` key at all.
- Errors are ``{"error": "<message>[: <cause>]"}`` (``RespondWithError``); the A2A proxy answers
  plain text (``http.Error``), e.g. ``Agent sandboxes/NS/NAME not found`` with 404.
- ``GET /sessions/{id}`` answers ``{"session": {...}, "events": [...]}``, not a flat session.
- ``POST /sessions`` requires ``agent_ref`` (``"namespace/name"``); 400 ``agent_ref is required``.
- A session's ``name`` is optional (``*string``, omitempty).
- The user is the ``user_id`` query parameter, else the ``X-User-Id`` header, else
  ``admin@kagent.dev`` (the unsecure authenticator).
- The A2A proxy: ``/api/a2a/{namespace}/{name}/`` in the v0.10 releases; at ae5a948 only
  ``/api/a2a-sandboxes/{namespace}/{name}/`` is left.
- ``GET /sessions/{id}/tasks`` answers A2A 0.3 task shapes unless asked with ``A2A-Version: 1.0``
  (``utils.NegotiateA2AWireVersion``; any other value is a 400); ae5a948 answers 1.0 always. The
  client asks for 1.0 and still reads 0.3 shapes (older controllers ignore the header).
"""

SESSIONS = "/sessions"
SESSION = "/sessions/{id}"
SESSION_TASKS = "/sessions/{id}/tasks"
AGENT_SESSIONS = "/sessions/agent/{namespace}/{name}"
TASK = "/tasks/{id}"

#: ``POST /sessions`` body keys (``api.SessionRequest``).
AGENT_REF_FIELD = "agent_ref"
NAME_FIELD = "name"
ID_FIELD = "id"

#: ``GET /sessions/{id}`` answer keys (``handlers.SessionResponse``).
SESSION_KEY = "session"
EVENTS_KEY = "events"

#: The A2A proxy paths, newest release first tried last: ``{base}`` is the controller root.
A2A_PATHS = ("/api/a2a/{namespace}/{name}/", "/api/a2a-sandboxes/{namespace}/{name}/")

#: sent with ``GET /sessions/{id}/tasks``: the A2A 1.0 task shapes, on every controller that has them
TASKS_WIRE = {"A2A-Version": "1.0"}

USER_QUERY = "user_id"
USER_HEADER = "X-User-Id"
DEFAULT_USER = "admin@kagent.dev"

#: The kagent-rewind add-on (``kagent-rewind/`` in this repository) keeps what a rewind took out of
#: a stored task in the task's metadata: the messages (A2A JSON, oldest first) ...
ADDON_REWOUND_HISTORY = "kagent_rewind_rewound_history"
#: ... and the ids of the rewind Tasks that took them out.
ADDON_REWOUND_BY = "kagent_rewind_rewound_by"
