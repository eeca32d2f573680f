"""``rewindtui auth login | status | logout``: the OAuth2 sign-in of the agent the connection
options name (see :mod:`rewindtui.client.auth_flows`).

- ``login``: a new grant now. The device-code login prints the URL to open and the code to enter
  (on stderr) and waits until the sign-in is done; the tokens are cached (0600) for the other
  commands and the app, which refresh them.
- ``status``: whether a token is cached for these options, when it expires, whether it can be
  refreshed (never the token).
- ``logout``: revoke the cached tokens at the server's revocation endpoint and forget them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

from rewindtui.client.auth import AuthError, redact
from rewindtui.config.settings import Settings


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "auth",
        help="OAuth2 sign-in: login (device code or client credentials), status, logout (revoke)",
        description=(
            "Sign in to the agent named by the connection options with OAuth2 (--oauth-client-id ...), "
            "show the cached sign-in, or revoke it."
        ),
    )
    p.add_argument("action", choices=("login", "status", "logout"))
    connection_options(p)


def _say(text: str) -> None:
    sys.stderr.write(redact(text) + "\n")
    sys.stderr.flush()


def show_device_prompt(uri: str, code: str, complete: str | None) -> None:
    _say(f"To sign in, open {uri} and enter the code {code}")
    if complete:
        _say(f"(or open {complete})")
    _say("Waiting for the sign-in to finish...")


async def _card(settings: Settings) -> dict[str, Any]:
    from rewindtui.client.a2a_client import A2AClient, ClientError

    assert settings.flows is not None
    client = A2AClient(settings.server_config(), http=settings.flows.http_client(settings.timeout))
    try:
        return await client.fetch_card()
    except ClientError as exc:
        raise AuthError(f"cannot read the agent card at {settings.url}: {exc.message}") from None
    finally:
        await client.aclose()


async def run(settings: Settings, action: str, out: Any = None) -> int:
    from rewindtui.client.auth_flows import oauth_session

    out = out or sys.stdout
    flows = settings.flows
    if settings.url is None or flows is None or flows.oauth is None:
        raise AuthError("give the agent (--url) and its OAuth2 client (--oauth-client-id ...) to sign in to")
    oauth = flows.oauth
    card = {} if (oauth.token_url or oauth.issuer) else await _card(settings)
    session = await oauth_session(flows, card, settings.url, settings.timeout)
    if action == "login":
        token = await session.login(show_device_prompt)
        left = f", expires in {int(token.expires_at - time.time())} s" if token.expires_at else ""
        refresh = ", renewable" if token.refresh_token else ""
        out.write(f"signed in to {session.endpoints.token_url} as client {oauth.client_id}{left}{refresh}\n")
        return 0
    if action == "status":
        cached = session.store.get(session.key)
        if cached is None:
            out.write(f"not signed in to {session.endpoints.token_url} as client {oauth.client_id}\n")
            return 1
        state = "valid" if cached.fresh() else "expired"
        left = f", expires in {int(cached.expires_at - time.time())} s" if cached.expires_at else ""
        out.write(
            f"signed in to {session.endpoints.token_url} as client {oauth.client_id}: {state}{left}"
            f"{', renewable' if cached.refresh_token else ''} (cached in {session.store.path})\n"
        )
        return 0
    had, problems = await session.logout()
    for problem in problems:
        _say(f"rewindtui: note: {problem}")
    out.write(
        (
            "signed out (tokens revoked and forgotten)"
            if had and not problems
            else "signed out"
            if had
            else "was not signed in"
        )
        + "\n"
    )
    return 0


def main(settings: Settings, args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run(settings, args.action))
    except AuthError as exc:
        _say(f"rewindtui: error: {exc}")
        return 1
