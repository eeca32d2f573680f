"""What a team found using a team server (``rewindtui serve --users`` on PostgreSQL) as a team
would: the admin command's bad input, and the words a read-only share is refused with. A real
PostgreSQL (``kit.postgres``), a real replica, the admin command run as users run it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import pytest
from srvkit import Served, send_body

from rewindtui.a2a import contract

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
_http = httpx.Client(timeout=120)


def _team(url: str, *args: str) -> tuple[int, str, str]:
    """``rewindtui team --database-url URL ARGS`` through the CLI's entry point: (rc, stdout, stderr)."""
    from rewindtui.cli.main import main as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli(["team", "--database-url", url, *args])
    return rc, out.getvalue(), err.getvalue()


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _send(replica: Served, token: str, session: str, text: str) -> httpx.Response:
    body = send_body(session, text)
    return _http.post(replica.agent_url, json=body, headers=_as(token))


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from kit.postgres import new_database

    url = new_database("tour")
    alice = _team(url, "token", "alice")[1].split()[0]
    bob = _team(url, "token", "bob")[1].split()[0]
    replica = Served(tmp_path_factory.mktemp("tour") / "a", env={"REWINDTUI_DATABASE_URL": url}, extra=["--users"])
    try:
        session = f"s-{uuid.uuid4().hex[:8]}"
        assert _send(replica, alice, session, "one").json()["result"]["status"]["state"] == "completed"
        yield replica, url, alice, bob, session
    finally:
        replica.close()


def _shares(url: str, session: str) -> list[Any]:
    import asyncio

    from rewindtui.server.storage.team_store import TeamStore

    async def read() -> list[Any]:
        store = TeamStore(url)
        try:
            return await store.shares(session)
        finally:
            await store.close()

    return asyncio.run(read())


def test_the_admin_command_refuses_bad_input_in_one_line_exit_1(team: Any) -> None:
    _replica, url, _alice, _bob, session = team
    before = _team(url, "users")[1]
    for args, words in [
        (("token", ""), "cannot be a user name"),
        (("token", "a/b"), "cannot be a user name"),
        (("token", " bob"), "cannot be a user name"),
        (("revoke", "nobody"), "no user named 'nobody'"),
        (("share", "no-such-session", "bob"), "no session 'no-such-session'"),
        (("share", session, "nobody"), "no user named 'nobody'"),
        (("share", session, "alice"), "is alice's already"),
        (("unshare", session, "bob"), "is not shared with bob"),
    ]:
        rc, out, err = _team(url, *args)
        assert (rc, out) == (1, ""), args
        assert err.startswith("rewindtui team: ") and words in err and err.count("\n") == 1, (args, err)
    assert _team(url, "users")[1] == before  # no user was made
    assert _shares(url, session) == []  # nor a share
    base, query = url.split("?", 1)
    missing = base.rsplit("/", 1)[0] + "/no_such_db?" + query
    rc, _out, err = _team(missing, "users")
    assert rc == 1 and err.count("\n") == 1 and "cannot use the database" in err and "no_such_db" in err


def test_sharing_a_session_the_database_lacks_is_refused_as_a_process(team: Any, tmp_path: Path) -> None:
    """As a user runs it: a share that names no session of the team database (an id from another
    server, a typo) is refused, exit 1, instead of "shared" and a share nobody can use."""
    _replica, url, _alice, _bob, _session = team
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env["REWINDTUI_DATABASE_URL"] = url
    done = subprocess.run(
        [sys.executable, "-m", "rewindtui", "team", "share", "8c73ab8e", "bob", "--mode", "write"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == "", done
    assert "no session '8c73ab8e'" in done.stderr and "shared" not in done.stderr


def test_a_read_only_share_is_refused_in_true_words(team: Any) -> None:
    replica, url, alice, bob, session = team
    tasks = _http.get(replica.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).json()["data"]
    invocation = tasks[0]["metadata"]["kagent_invocation_id"]
    assert _team(url, "share", session, "bob", "--mode", "read")[0] == 0
    try:
        assert _http.get(replica.api_url + f"/sessions/{session}/tasks", headers=_as(bob)).status_code == 200
        refusals = [
            _http.post(
                replica.api_url + contract.REST_REWIND.format(id=session),
                headers=_as(bob),
                json={contract.REST_BEFORE_FIELD: invocation},
            ),
            _http.post(
                replica.api_url + contract.REST_FORK.format(id=session),
                headers=_as(bob),
                json={contract.REST_BEFORE_FIELD: invocation},
            ),
            _http.delete(replica.api_url + f"/sessions/{session}", headers=_as(bob)),
            _send(replica, bob, session, "let me write"),
        ]
        for answer in refusals:
            assert answer.status_code == 403, answer.text
            error = answer.json()["error"]
            assert "shared with you read-only" in error and "alice" in error and "not found" not in error
        after = _http.get(replica.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).json()["data"]
        assert after == tasks  # nothing stored, nothing rewound
    finally:
        _team(url, "unshare", session, "bob")
    # without a share it stays unknown to bob (404), as before: nothing said about alice
    answer = _http.post(
        replica.api_url + contract.REST_REWIND.format(id=session),
        headers=_as(bob),
        json={contract.REST_BEFORE_FIELD: invocation},
    )
    assert answer.status_code == 404 and "alice" not in answer.text


def test_the_card_of_a_server_with_users_asks_for_a_bearer_token(team: Any) -> None:
    """Every request but the card needs a user's token: the card says so (A2A securitySchemes), so
    a client knows before it is refused, and its 401 hint does not say "no security scheme"."""
    replica, _url, _alice, _bob, _session = team
    card = _http.get(replica.agent_url + ".well-known/agent-card.json").json()
    scheme = card["securitySchemes"]["bearer"]
    assert scheme["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert "rewindtui team token" in scheme["httpAuthSecurityScheme"]["description"]
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    assert _http.get(replica.api_url + "/sessions").status_code == 401


def test_a_mistyped_or_revoked_token_is_told_apart_from_none(team: Any) -> None:
    replica, url, _alice, _bob, _session = team
    none = _http.get(replica.api_url + "/sessions")
    assert none.status_code == 401 and "send Authorization: Bearer" in none.json()["error"]
    typo = _http.get(replica.api_url + "/sessions", headers=_as("rwt_typo"))
    assert typo.status_code == 401 and "does not know the bearer token sent" in typo.json()["error"]
    carol = _team(url, "token", "carol")[1].split()[0]
    assert _http.get(replica.api_url + "/sessions", headers=_as(carol)).status_code == 200
    assert _team(url, "revoke", "carol")[0] == 0
    deadline = time.monotonic() + 30  # a revoke reaches a running replica within its 5 s token cache
    while (answer := _http.get(replica.api_url + "/sessions", headers=_as(carol))).status_code != 401:
        assert time.monotonic() < deadline, "a revoked token still works"
        time.sleep(0.2)
    assert "does not know the bearer token sent" in answer.json()["error"]


def test_a_share_over_rest_names_a_user_that_exists(team: Any) -> None:
    replica, url, alice, _bob, session = team
    for name in ("bobb", "a/b\u0001"):
        answer = _http.post(
            replica.api_url + f"/sessions/{session}/shares", headers=_as(alice), json={"user": name, "mode": "read"}
        )
        assert answer.status_code == 400 and "no user named" in answer.json()["error"], answer.text
    assert _shares(url, session) == []
    made = _http.post(
        replica.api_url + f"/sessions/{session}/shares", headers=_as(alice), json={"user": "bob", "mode": "read"}
    )
    assert made.status_code == 201
    _team(url, "unshare", session, "bob")
