"""The kagent-style REST API: sessions (list, create, read, rename, delete), a session's tasks
page by page, and rewind, redo and fork over REST (the rewind extension's calls).

:class:`RestApi` is a part of :class:`~rewindtui.client.a2a_client.A2AClient`, which gives it the
configuration, the capabilities read from the agent card and the HTTP requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rewindtui.a2a import contract, kagent
from rewindtui.client.capabilities import Capabilities, ServerConfig
from rewindtui.client.errors import HTTPStatusFailed, MalformedFrame, Unsupported, excerpt, parse_json
from rewindtui.client.tasks import PageProgress, TaskPage, excerpt_of, task_list, task_of
from rewindtui.client.transports.http import segment

if TYPE_CHECKING:
    import httpx


@dataclass
class Session:
    id: str
    name: str = ""
    user_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    #: remembered locally, but the server no longer knows it
    gone: bool = False
    #: the server's word for the session's state when it has one ("ready", "suspended", ...: kagent
    #: 1.0's conversations); "" when it says none
    state: str = ""

    @classmethod
    def from_json(cls, d: Any) -> Session:
        """A session from either answer shape: flat, or kagent's ``{"session": {...}, "events": [...]}``."""
        if isinstance(d, dict) and isinstance(d.get(kagent.SESSION_KEY), dict) and "id" not in d:
            d = d[kagent.SESSION_KEY]
        if not isinstance(d, dict) or not isinstance(d.get("id"), str):
            raise MalformedFrame(f"not a session: {excerpt_of(d)!r}")
        name = d.get("name")
        return cls(
            id=d["id"],
            name=name if isinstance(name, str) else "",
            user_id=d.get("user_id"),
            created_at=d.get("created_at"),
            updated_at=d.get("updated_at"),
            raw=d,
        )


class RestApi:
    """The REST calls of :class:`~rewindtui.client.a2a_client.A2AClient`."""

    config: ServerConfig
    capabilities: Capabilities | None
    #: REST paging per session (a newest-page read starts it again)
    _paging: dict[str, PageProgress]

    if TYPE_CHECKING:  # given by A2AClient

        async def connect(self) -> Capabilities: ...

        async def _request(self, method: str, url: str, **kw: Any) -> httpx.Response: ...

    def _params(self) -> dict[str, str]:
        return {kagent.USER_QUERY: self.config.user_id} if self.config.user_id else {}

    async def _api(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call; returns the envelope's ``data`` (None when it has none:
        kagent's envelope omits an empty ``data``)."""
        body = await self._api_body(method, path, **kw)
        if isinstance(body, dict) and ("error" in body or "data" in body):
            return body.get("data")  # the envelope; kagent leaves an empty data out
        return body  # a flat answer

    async def _api_body(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call's whole answer (the envelope, or a flat answer); a refusal in
        the envelope raises HTTPStatusFailed."""
        if not self.config.api:
            await self.connect()  # the REST base may come from the agent card
        api = self._api_base()
        response = await self._request(method, api + path, params={**self._params(), **kw.pop("params", {})}, **kw)
        if not response.content.strip():
            return None  # e.g. 204 No Content
        try:
            body = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{method} {path}: not JSON: {excerpt(response.text)!r}") from None
        if isinstance(body, dict) and body.get("error") not in (None, False):
            detail = body.get("message") if body.get("error") is True else body.get("error")
            raise HTTPStatusFailed(f"{method} {path}: {detail}", response.status_code, str(detail))
        return body

    def _api_base(self) -> str:
        api = self.config.api or (self.capabilities.api if self.capabilities else None)
        if not api:
            raise Unsupported("this server has no REST API configured (give --api)")
        return api.rstrip("/")

    # -- rewind and fork over REST -------------------------------------------------------------
    async def rewind_rest(self, session_id: str, before: str, history_length: int | None = None) -> Any:
        """Rewind over REST: the rewind Task (its history: the effective history, or with
        ``history_length`` its newest messages where the server bounds it)."""
        body: dict[str, Any] = {contract.REST_BEFORE_FIELD: before}
        if history_length is not None:
            body[contract.REST_HISTORY_LENGTH_FIELD] = history_length
        return await self._api("POST", contract.REST_REWIND.format(id=_seg(session_id)), json=body)

    async def redo(
        self, session_id: str, rewind_task_id: str | None = None, history_length: int | None = None
    ) -> dict[str, Any]:
        """Undo a rewind (None: the session's last one): the Task holding the effective history
        (with ``history_length``: its newest messages, where the server bounds it)."""
        body: dict[str, Any] = {contract.REST_REDO_FIELD: rewind_task_id} if rewind_task_id else {}
        if history_length is not None:
            body[contract.REST_HISTORY_LENGTH_FIELD] = history_length
        data = await self._api("POST", contract.REST_REDO.format(id=_seg(session_id)), json=body)
        return task_of(data, "redo")

    async def fork(self, session_id: str, before: str) -> Session:
        data = await self._api(
            "POST", contract.REST_FORK.format(id=_seg(session_id)), json={contract.REST_BEFORE_FIELD: before}
        )
        return Session.from_json(data)

    # -- sessions and tasks (kagent-style REST) ------------------------------------------------
    @property
    def has_api(self) -> bool:
        return bool(self.config.api or (self.capabilities and self.capabilities.api))

    async def list_sessions(self) -> list[Session]:
        """The user's sessions; on a kagent controller, those of the configured agent."""
        path = kagent.SESSIONS
        if self.config.agent_ref:
            namespace, _, name = self.config.agent_ref.partition("/")
            path = kagent.AGENT_SESSIONS.format(namespace=_seg(namespace), name=_seg(name))
        data = await self._api("GET", path)
        if data is not None and not isinstance(data, list):
            raise MalformedFrame(f"GET {path}: expected a list of sessions")
        return [Session.from_json(s) for s in data or ()]

    async def create_session(self, name: str | None = None, session_id: str | None = None) -> Session:
        body: dict[str, Any] = {}
        if self.config.agent_ref:
            body[kagent.AGENT_REF_FIELD] = self.config.agent_ref
        if name:
            body[kagent.NAME_FIELD] = name
        if session_id:
            body[kagent.ID_FIELD] = session_id
        return Session.from_json(await self._api("POST", kagent.SESSIONS, json=body))

    async def get_session(self, session_id: str) -> Session:
        return Session.from_json(await self._api("GET", kagent.SESSION.format(id=_seg(session_id))))

    async def rename_session(self, session_id: str, name: str) -> Session:
        return Session.from_json(
            await self._api("PUT", kagent.SESSION.format(id=_seg(session_id)), json={kagent.NAME_FIELD: name})
        )

    async def delete_session(self, session_id: str) -> None:
        await self._api("DELETE", kagent.SESSION.format(id=_seg(session_id)))

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[dict[str, Any]]:
        params = {contract.REST_INCLUDE_REWOUND: "true"} if include_rewound else {}
        path = kagent.SESSION_TASKS.format(id=_seg(session_id))
        data = await self._api("GET", path, params=params, headers=kagent.TASKS_WIRE)
        return task_list(data, session_id)

    async def session_tasks_page(
        self,
        session_id: str,
        limit: int,
        before: str | None = None,
        *,
        include_rewound: bool = False,
        history_length: int | None = None,
    ) -> TaskPage:
        """One page of a session's tasks over REST: at most ``limit`` of the newest tasks older
        than the page whose answer gave ``before`` (None: the newest), oldest first, and the token
        of the page before it (None on the oldest page). A server that does not page (kagent's
        controller: no token in its envelope) answers every task, with None. ``history_length``:
        each task's history cut to its newest messages (:data:`contract.REST_HISTORY_LENGTH_FIELD`;
        ask it only of a server whose card has ``newest_task``, which honours it)."""
        params = {contract.REST_TASKS_LIMIT: str(limit)}
        if before:
            params[contract.REST_TASKS_BEFORE] = before
        if include_rewound:
            params[contract.REST_INCLUDE_REWOUND] = "true"
        if history_length is not None:
            params[contract.REST_HISTORY_LENGTH_FIELD] = str(history_length)
        key = f"{session_id}|rewound" if include_rewound else session_id
        if history_length is not None:  # cut pages are read beside whole ones (chat.pages): paged apart
            key += f"|{history_length}"
        progress = self._paging.get(key) if before else None
        if progress is None:
            progress = self._paging[key] = PageProgress(f"older turns of session {session_id}")
        path = kagent.SESSION_TASKS.format(id=_seg(session_id))
        body = await self._api_body("GET", path, params=params, headers=kagent.TASKS_WIRE)
        enveloped = isinstance(body, dict) and ("error" in body or "data" in body)
        tasks = task_list(body.get("data") if enveloped else body, session_id)
        token = body.get(contract.REST_NEXT_PAGE_FIELD) if enveloped else None
        return progress.check(before, TaskPage(tasks, token if isinstance(token, str) and token else None))

    async def newest_task_id(self, session_id: str) -> str | None:
        """The id of the session's newest task, in one small request (REST ``limit=1``); None when
        the server does not say that this is a revision (its card's ``newest_task`` param)."""
        newest = await self.newest_task(session_id)
        found = newest.get("id") if newest is not None else None
        return found if isinstance(found, str) else None

    async def newest_task(self, session_id: str) -> dict[str, Any] | None:
        """The session's newest task (its id and status; the live view compares both), as
        :meth:`newest_task_id` reads it; None when the server cannot say."""
        caps = await self.connect()
        if caps.newest_task:
            # its id and status only: without the history (a redo's Task holds the whole effective
            # history, megabytes in a long session, read at every check of the live view)
            params = {contract.REST_TASKS_LIMIT: "1", contract.REST_HISTORY_LENGTH_FIELD: "0"}
            body = await self._api_body("GET", kagent.SESSION_TASKS.format(id=_seg(session_id)), params=params)
            enveloped = isinstance(body, dict) and ("error" in body or "data" in body)
            tasks = task_list(body.get("data") if enveloped else body, session_id)
        else:
            return None  # a server that does not say so may not page, or order, as this needs
        newest = tasks[-1] if tasks else None
        return newest if isinstance(newest, dict) else None


def _seg(value: str) -> str:
    """A path segment, escaped (see :func:`rewindtui.client.transports.http.segment`)."""
    return segment(value)
