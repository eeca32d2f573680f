"""Push-notification configs on the wire, both dialects: the request parameters of set / get /
list / remove, and one flat shape for what comes back. Pure functions over dicts.

* A2A 1.0 (a2a-sdk 1.3 ``a2a.proto``: ``TaskPushNotificationConfig {tenant, id, task_id, url,
  token, authentication}``; ``GetTaskPushNotificationConfigRequest {task_id, id}``,
  ``ListTaskPushNotificationConfigsRequest {task_id, page_size, page_token}`` answered
  ``{configs, next_page_token}``, ``DeleteTaskPushNotificationConfigRequest {task_id, id}``).
* A2A 0.3 (a2a-sdk 1.3 ``a2a/compat/v0_3/types.py``: ``TaskPushNotificationConfig {taskId,
  pushNotificationConfig: {id, url, token, authentication}}``; get / list / delete take ``{id:
  <task id>, pushNotificationConfigId}``; list answers a bare list of configs).

The flat shape every command prints: ``{"taskId", "id", "url", "token", "authentication"}`` (keys
the server left out are left out).
"""

from __future__ import annotations

from typing import Any

from rewindtui.a2a.dialect import Dialect

#: the operations (:data:`rewindtui.a2a.dialect.METHODS` names their JSON-RPC methods)
SET, GET, LIST, DELETE = "set_push", "get_push", "list_push", "delete_push"


def set_params(dialect: Dialect, task_id: str, url: str, token: str | None, config_id: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {"url": url}
    if config_id:
        config["id"] = config_id
    if token:
        config["token"] = token
    if dialect is Dialect.V03:
        return {"taskId": task_id, "pushNotificationConfig": config}
    return {"taskId": task_id, **config}


def get_params(dialect: Dialect, task_id: str, config_id: str | None) -> dict[str, Any]:
    if dialect is Dialect.V03:
        return {"id": task_id, **({"pushNotificationConfigId": config_id} if config_id else {})}
    return {"taskId": task_id, "id": config_id or task_id}


def list_params(dialect: Dialect, task_id: str) -> dict[str, Any]:
    return {"id": task_id} if dialect is Dialect.V03 else {"taskId": task_id}


def delete_params(dialect: Dialect, task_id: str, config_id: str) -> dict[str, Any]:
    if dialect is Dialect.V03:
        return {"id": task_id, "pushNotificationConfigId": config_id}
    return {"taskId": task_id, "id": config_id}


_KEYS = ("id", "url", "token", "authentication")


def flat_config(value: Any) -> dict[str, Any] | None:
    """A config from either dialect as ``{"taskId", "id", "url", ...}``; None if it is not one."""
    if not isinstance(value, dict):
        return None
    inner = value.get("pushNotificationConfig")
    source = inner if isinstance(inner, dict) else value
    if not isinstance(source.get("url"), str):
        return None
    out: dict[str, Any] = {}
    task_id = value.get("taskId", value.get("task_id"))
    if isinstance(task_id, str):
        out["taskId"] = task_id
    for key in _KEYS:
        if key in source and source[key] not in (None, ""):
            out[key] = source[key]
    return out


def config_list(value: Any) -> list[dict[str, Any]] | None:
    """The configs of a list answer: 1.0 ``{"configs": [...]}`` (``{}`` when none) or a 0.3 bare
    list. None when it is neither; configs that are not configs are left out."""
    if isinstance(value, dict):
        items = value.get("configs", [])
    else:
        items = value
    if not isinstance(items, list):
        return None
    return [c for c in (flat_config(i) for i in items) if c is not None]
