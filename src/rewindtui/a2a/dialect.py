"""The two A2A dialects and the vocabulary they disagree on.

A2A 0.3 (kagent v0.10.x, ``message/stream``) tags every object with ``kind`` and uses short
lower-case roles and states. A2A 1.0 (a2a-sdk >= 1.0, ``SendStreamingMessage``) drops ``kind``,
wraps stream results in ``{"task" | "message" | "statusUpdate" | "artifactUpdate": ...}`` and
spells roles and states as protobuf enums. Everything here is a pure function over values.
"""

from __future__ import annotations

from enum import Enum


class Dialect(str, Enum):
    V03 = "0.3"
    V10 = "1.0"

    @classmethod
    def parse(cls, value: str | None) -> Dialect | None:
        """``"0.3"``, ``"0.3.0"``, ``"1.0"``, ``"1"`` ... -> a dialect; anything else -> None."""
        if not value:
            return None
        text = str(value).strip().lower().lstrip("v")
        if text.startswith("0."):
            return cls.V03
        if text.startswith("1") or text.startswith("2"):
            return cls.V10
        return None


_ROLES = {
    "ROLE_USER": "user",
    "ROLE_AGENT": "agent",
    "USER": "user",
    "AGENT": "agent",
    "user": "user",
    "agent": "agent",
    "ROLE_UNSPECIFIED": "unknown",
}

_STATES = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_CANCELLED": "canceled",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
    "TASK_STATE_UNSPECIFIED": "unknown",
    "input_required": "input-required",
    "auth_required": "auth-required",
    "cancelled": "canceled",
}

#: States after which a task takes no more events.
TERMINAL_STATES = frozenset({"completed", "canceled", "failed", "rejected"})
#: States that end the current turn: terminal ones and those that wait for the user.
TURN_ENDING_STATES = TERMINAL_STATES | {"input-required", "auth-required"}


def norm_role(value: object) -> str:
    """Normalise a role from either dialect to ``user`` / ``agent`` (others kept as text)."""
    if not isinstance(value, str):
        return "unknown"
    return _ROLES.get(value) or value.lower()


def norm_state(value: object) -> str:
    """Normalise a task state from either dialect to the 0.3 spelling (``input-required`` ...)."""
    if not isinstance(value, str):
        return "unknown"
    return _STATES.get(value) or value


#: JSON-RPC method per operation and dialect (None: the dialect has no such method).
METHODS: dict[str, dict[Dialect, str | None]] = {
    "stream": {Dialect.V03: "message/stream", Dialect.V10: "SendStreamingMessage"},
    "get_task": {Dialect.V03: "tasks/get", Dialect.V10: "GetTask"},
    "list_tasks": {Dialect.V03: None, Dialect.V10: "ListTasks"},
    "cancel_task": {Dialect.V03: "tasks/cancel", Dialect.V10: "CancelTask"},
    "subscribe": {Dialect.V03: "tasks/resubscribe", Dialect.V10: "SubscribeToTask"},
    # push-notification configs (shapes: rewindtui.a2a.push_wire; names: a2a-sdk 1.3's a2a.proto
    # and a2a/compat/v0_3/jsonrpc_transport.py)
    "set_push": {Dialect.V03: "tasks/pushNotificationConfig/set", Dialect.V10: "CreateTaskPushNotificationConfig"},
    "get_push": {Dialect.V03: "tasks/pushNotificationConfig/get", Dialect.V10: "GetTaskPushNotificationConfig"},
    "list_push": {Dialect.V03: "tasks/pushNotificationConfig/list", Dialect.V10: "ListTaskPushNotificationConfigs"},
    "delete_push": {
        Dialect.V03: "tasks/pushNotificationConfig/delete",
        Dialect.V10: "DeleteTaskPushNotificationConfig",
    },
}

#: JSON-RPC error codes a client acts on (A2A and JSON-RPC 2.0).
RPC_METHOD_NOT_FOUND = -32601
RPC_INVALID_PARAMS = -32602
RPC_TASK_NOT_FOUND = -32001
RPC_TASK_NOT_CANCELABLE = -32002
RPC_UNSUPPORTED_OPERATION = -32004
RPC_VERSION_NOT_SUPPORTED = -32009
#: Codes meaning "this server does not offer that operation".
RPC_NOT_OFFERED = frozenset({RPC_METHOD_NOT_FOUND, RPC_UNSUPPORTED_OPERATION, RPC_VERSION_NOT_SUPPORTED})


def method(operation: str, dialect: Dialect) -> str | None:
    """The JSON-RPC method name of ``operation`` in ``dialect`` (None: not in that dialect)."""
    return METHODS[operation][dialect]


def wire_role(role: str, dialect: Dialect) -> str:
    if dialect is Dialect.V10:
        return "ROLE_AGENT" if role == "agent" else "ROLE_USER"
    return "agent" if role == "agent" else "user"
