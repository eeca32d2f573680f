"""A rewind's stored history as a chain link (:mod:`rewindtui.server.storage.history_refs`) reads
back exactly what the whole list of message references it replaced reads back.

Three stores take the same random chain of turns, rewinds, redos, answers to older turns (an
answer joining a redo's history) and sessions that begin as a fork (one task holding the copied
history of several invocations), in lockstep, on SQLite and on a team server's PostgreSQL:

* ``whole``: every rewind stores its whole effective history, a list (the representation before
  links; also what a database written before them holds);
* ``links``: every rewind stores a link (the code as it runs);
* ``mixed``: lists for the first steps, links after (an old database the new code goes on with).

After every step each rewind task's history, the effective history the log computes, a plan's
newest messages and its count agree across the three, read by every reader: one task, a page of
tasks, the session log.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rewindtui.a2a import contract
from rewindtui.server.shared.wire import dumps
from rewindtui.server.storage import history_refs
from rewindtui.server.storage.session_log import OWNING_KINDS, REWIND_KINDS, Plan
from rewindtui.server.storage.store import SessionRow, Statement, Store
from rewindtui.server.storage.store_rows import _INSERT_TASK

USER = "u"


class WholeStore(Store):
    """A store that writes every rewind's history whole, as a list (the old representation)."""

    lists = True

    def rewind_statements(self, **kw: Any) -> list[Statement]:  # type: ignore[override]
        statements = Store.rewind_statements(**kw)
        if not self.lists:
            return statements
        refs = whole_history(kw["plan"], kw["rewind_task"]["metadata"][contract.REWOUND_BEFORE_KEY])
        out: list[Statement] = []
        for sql, params in statements:
            if sql == _INSERT_TASK:
                params = (*params[:8], dumps(refs), params[9])
            out.append((sql, params))
        return out


def whole_history(plan: Plan, before: str) -> list[int]:
    """The effective history just before ``before`` computed whole, as the store did before links:
    the log's effective history before the task where the invocation begins (read from lists only,
    in a store that writes lists), and the older messages of that task."""
    log = plan.log
    assert log is not None
    begins, first_message = log._first[before]
    effective = log.effective(begins - 1)
    task = log.tasks[begins]
    if task.kind in OWNING_KINDS and first_message is not None:
        effective += [m for m in log._messages.get(task.seq, []) if m.seq < first_message]
    return [m.seq for m in effective]


def message(task_id: str, sid: str, inv: str, role: str, n: int) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": f"m-{n}",
        "role": role,
        "parts": [{"kind": "text", "text": f"message {n}"}],
        "contextId": sid,
        "taskId": task_id,
        "metadata": {"kagent_invocation_id": inv},
    }


class Driver:
    """The same steps on several stores (their seqs stay equal: each is fresh, written alike)."""

    def __init__(self, stores: list[Store], sid: str) -> None:
        self.stores = stores
        self.sid = sid
        self.n = 0

    def _next(self) -> int:
        self.n += 1
        return self.n

    async def start(self, fork_invocations: int) -> None:
        ts = "2026-01-01T00:00:00Z"
        row = SessionRow(self.sid, USER, "s", "a", ts, ts)
        for store in self.stores:
            if not fork_invocations:
                await store.create_session(row)
        if fork_invocations:
            task_id = f"{self.sid}-fork"
            messages = [
                message(task_id, self.sid, f"{self.sid}-f{k}", role, self._next())
                for k in range(fork_invocations)
                for role in ("user", "agent")
            ]
            task = {"kind": "task", "id": task_id, "contextId": self.sid, "status": {"state": "completed"}}
            for store in self.stores:
                await store._write(store.fork_statements(session=row, fork_task=task, messages=messages))

    async def turn(self) -> None:
        n = self._next()
        task_id, inv = f"{self.sid}-t{n}", f"{self.sid}-i{n}"
        task = {"kind": "task", "id": task_id, "contextId": self.sid, "status": {"state": "working"}}
        user = message(task_id, self.sid, inv, "user", n)
        answer = message(task_id, self.sid, inv, "agent", self._next())
        for store in self.stores:
            await store.start_turn(task=task, session_id=self.sid, user_id=USER, user_message=user, name=None)
            await store.set_turn_invocation(task=task, user_message=user, invocation_id=inv)
            await store.add_messages(session_id=self.sid, task_id=task_id, messages=[answer])

    async def answer(self, k: int) -> None:
        """Another message of an earlier turn (an answer to a question a redo brought back)."""
        turns = [t for t in await self.stores[0].session_tasks(self.sid, include_rewound=True) if t.kind == "turn"]
        if not turns:
            return
        task = turns[k % len(turns)]
        answer = message(task.id, self.sid, task.invocation_id or "", "agent", self._next())
        for store in self.stores:
            await store.add_messages(session_id=self.sid, task_id=task.id, messages=[answer])

    async def go_back(self, before: str, *, redo_of: str | None) -> None:
        n = self._next()
        task_id = f"{self.sid}-r{n}"
        plans = [await store.plan_rewind(self.sid, before, current_only=redo_of is None) for store in self.stores]
        whole = whole_history(plans[0], before)  # the first store holds lists only
        assert len({p.total for p in plans}) == 1
        assert all([m.seq for m in p.effective] == whole for p in plans)
        for p in plans:
            assert p.total == len(p.effective)
            for k in (0, 1, 3, 200):
                assert p.newest(k) == (p.effective[-k:] if k else [])
        metadata: dict[str, Any] = {contract.REWOUND_BEFORE_KEY: before, contract.EFFECTIVE_HISTORY_TOTAL_KEY: 0}
        if redo_of:
            metadata[contract.REDO_OF_KEY] = redo_of
        task = {"kind": "task", "id": task_id, "contextId": self.sid, "status": {"state": "completed"}}
        for store, plan in zip(self.stores, plans, strict=True):
            task["metadata"] = {**metadata, contract.EFFECTIVE_HISTORY_TOTAL_KEY: plan.total}
            await store._write(
                store.rewind_statements(
                    session_id=self.sid, rewind_task=task, plan=plan, user_id=USER, invocation_id=f"{self.sid}-x{n}"
                )
            )

    async def check(self) -> None:
        answers: list[Any] = []
        for store in self.stores:
            tasks = await store.session_tasks(self.sid, include_rewound=True)
            one = {t.id: [json.loads(b)["messageId"] for b in await store.task_history_bodies(t)] for t in tasks}
            page = await store.tasks_history_bodies(tasks, v1=True)
            paged = {k: [json.loads(b)["messageId"] for b in v] for k, v in page.items()}
            assert one == paged
            for k in (1, 3):  # a page's histories cut: a rewind's newest k only are read
                cut = await store.tasks_history_bodies(tasks, newest=k)
                newest = {t.id: [json.loads(b)["messageId"] for b in cut[t.id]] for t in tasks if t.history_refs}
                assert newest == {t: one[t][-k:] for t in newest}
            totals = {
                t.id: json.loads(t.body)["metadata"][contract.EFFECTIVE_HISTORY_TOTAL_KEY]
                for t in tasks
                if t.kind in REWIND_KINDS
            }
            log = await store._read_refs(await store.session_log(self.sid, lazy=True))
            whole = await store.session_log(self.sid)
            current = [m.seq for m in whole.effective(whole.head)]
            assert [m.seq for m in log.effective(log.head)] == current
            assert log.current_invocations() == await store.session_invocations(self.sid)
            for t in tasks:
                if t.kind in REWIND_KINDS:
                    assert totals[t.id] == len(one[t.id]), t.id
            answers.append((one, totals, current))
        assert all(a == answers[0] for a in answers), "the stores read back different histories"


steps = st.lists(
    st.one_of(
        st.just(("turn", 0)),
        st.just(("turn", 0)),
        st.tuples(st.just("rewind"), st.integers(0, 30)),
        st.just(("redo_last", 0)),
        st.tuples(st.just("redo"), st.integers(0, 30)),
        st.tuples(st.just("answer"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=18,
)


async def run(urls: list[str | None], root: Path, plan: list[tuple[str, int]], fork: int, switch: int) -> None:
    stores: list[Store] = []
    for i, url in enumerate(urls):
        store = WholeStore(root / f"s{i}.db", database_url=url)
        await store.open()
        stores.append(store)
    whole, links, mixed = stores
    links.lists = False  # type: ignore[attr-defined]
    try:
        driver = Driver(stores, f"s-{uuid.uuid4().hex[:8]}")
        await driver.start(fork)
        for i, (op, k) in enumerate(plan):
            mixed.lists = i < switch  # type: ignore[attr-defined]
            log = await whole._read_refs(await whole.session_log(driver.sid, lazy=True))
            if op == "turn":
                await driver.turn()
            elif op == "answer":
                await driver.answer(k)
            elif op == "rewind":
                current = log.current_invocations()
                if current:
                    await driver.go_back(current[k % len(current)], redo_of=None)
            elif op == "redo_last":
                last = log.last_rewind()
                if last is not None and last.invocation_id:
                    await driver.go_back(last.invocation_id, redo_of=last.id)
            else:
                rewinds = [t for t in log.tasks if t.kind in REWIND_KINDS and t.invocation_id]
                if rewinds:
                    target = rewinds[k % len(rewinds)]
                    await driver.go_back(target.invocation_id or "", redo_of=target.id)
            await driver.check()
        stored = [t.history_refs for t in await links.session_tasks(driver.sid, include_rewound=True) if t.history_refs]
        assert all(isinstance(history_refs.parse(s), history_refs.Link) for s in stored)
    finally:
        for store in stores:
            await store.close()


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_links_read_back_what_whole_lists_do(engine: str) -> None:
    urls: list[str | None] = [None, None, None]
    if engine == "postgresql":
        from kit.postgres import new_database

        urls = [new_database("hw"), new_database("hl"), new_database("hm")]
    root = Path(tempfile.mkdtemp(prefix="links-"))

    @settings(
        max_examples=60 if engine == "sqlite" else 25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(steps, st.integers(0, 3), st.integers(0, 12))
    # an answer to an older turn joins the rewind holding it, and the redo after it; a fork's cut
    @example([("turn", 0), ("turn", 0), ("rewind", 1), ("answer", 0), ("turn", 0), ("rewind", 2)], 0, 0)
    @example([("turn", 0), ("turn", 0), ("rewind", 1), ("redo_last", 0), ("answer", 1), ("rewind", 1)], 0, 3)
    @example([("turn", 0), ("rewind", 1), ("turn", 0), ("redo", 0), ("answer", 0), ("rewind", 0)], 2, 2)
    # runs of turns around a rewound one are not one run; nor where a turn got a message after a link
    @example([("turn", 0), ("turn", 0), ("rewind", 1), ("turn", 0), ("turn", 0), ("rewind", 2)], 0, 0)
    @example(
        [
            *[("turn", 0), ("turn", 0), ("rewind", 1), ("redo_last", 0), ("turn", 0), ("rewind", 2)],
            *[("rewind", 1), ("answer", 0), ("redo", 2)],
        ],
        0,
        0,
    )
    # a list a message joined out of its turn's place, carried on as a link
    @example([("turn", 0), ("turn", 0), ("turn", 0), ("rewind", 2), ("answer", 0), ("turn", 0), ("rewind", 2)], 0, 5)
    def chain(plan: list[tuple[str, int]], fork: int, switch: int) -> None:
        asyncio.run(run(urls, root, plan, fork, switch))

    chain()


def test_a_moved_link_names_the_moved_tasks_and_messages() -> None:
    link = history_refs.Link(5, 7, 3, (12, (8, 9, 40), 41))
    moved = history_refs.parse(history_refs.renumber(link.dumps(), 100, 1000))
    assert moved == history_refs.Link(5, 107, 3, (1012, (108, 109, 1040), 1041))
    assert history_refs.renumber("[1,2,3]", 100, 1000) == "[1001,1002,1003]"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2", "not JSON"),
        ('["1"]', "not a list of message numbers"),
        ("5", "not a list of message numbers"),
        ('{"n": 1}', "link is not one"),
        ('{"n": true, "s": []}', "link is not one"),
        ('{"n": 1, "s": [[1, 2]]}', "segment that is not one"),
        ('{"n": 1, "s": [[1, 2, "3"]]}', "segment that is not one"),
    ],
)
def test_a_stored_history_that_is_not_one_says_why(text: str, why: str) -> None:
    problem = history_refs.problem(text)
    assert problem is not None and why in problem
    assert history_refs.problem('{"n": 2, "b": 4, "u": 1, "s": [[1, 2, 3], 9]}') is None
