"""``rewindtui web``: the app in a browser (textual-serve).

Each browser tab gets its own run of the app (``python -m rewindtui`` with the connection options
given to ``web``), driven over a websocket by textual-serve's page. It listens on loopback by
default. Bound to any other address it wants a token: the URL to open is printed once with
``?token=...``; the page sets it as an HttpOnly, SameSite=Strict cookie, and every later request
(the websocket included) must carry it. The token is random, or read from ``--token-env VAR`` /
``--token-file PATH`` (never a flag value). A websocket opened from another site's page (an
``Origin`` that is not this server's) is refused whatever the address, so a page on another site
cannot drive the app in a user's browser; on loopback, a request whose ``Host`` is not a loopback
name is refused too (DNS rebinding).

Needs the ``web`` extra (``pip install 'rewindtui[web]'``).
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import secrets
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rewindtui.client.auth import SecretRef, register_secret
from rewindtui.client.auth_flows import FLAG_NAMES as FLOW_KEYS
from rewindtui.config.settings import AUTH_KEYS, Settings

COOKIE = "rewindtui_web_token"
DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs per tab: this Python running the app with the
    connection options ``web`` was given (secrets stay in the environment or files they name)."""
    parts = [sys.executable, "-m", "rewindtui"]
    names = (
        "url",
        "api",
        "kagent",
        "agent",
        "user_id",
        "rewind",
        "dialect",
        "binding",
        "config",
        "data_dir",
        "model",
        "theme",
        *AUTH_KEYS,
        *FLOW_KEYS,
    )
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            parts += ["--" + name.replace("_", "-"), str(value)]
    for header in getattr(args, "header", None) or ():
        parts += ["--header", header]
    return shlex.join(parts)


def _hostname(netloc: str) -> str:
    if netloc.startswith("["):
        return netloc[1 : netloc.find("]")] if "]" in netloc else netloc
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def allowed(
    path: str,
    query: Mapping[str, str],
    cookies: Mapping[str, str],
    headers: Mapping[str, str],
    token: str | None,
    own_hosts: set[str],
    loopback_only: bool = False,
) -> tuple[bool, bool]:
    """Whether a request may pass, and whether to set the token cookie on its answer.
    ``loopback_only`` (bound to loopback): the Host must name loopback too, so a page on another
    site whose name was re-pointed at 127.0.0.1 (DNS rebinding) is refused."""
    if loopback_only and not is_loopback(_hostname(headers.get("Host", ""))):
        return False, False
    if path == "/ws":
        origin = headers.get("Origin")
        if origin and urlsplit(origin).netloc not in own_hosts:
            return False, False
    if token is None:
        return True, False
    given = query.get("token")
    if given is not None and hmac.compare_digest(given, token):
        return True, True
    cookie = cookies.get(COOKIE)
    return cookie is not None and hmac.compare_digest(cookie, token), False


def with_title(page: str, title: str) -> str:
    """textual-serve's page has no ``<title>`` (a browser tab shows its address): one, escaped,
    opening its ``<head>``; a page that has one keeps it."""
    import html

    if "<title" in page.lower() or "<head>" not in page:
        return page
    return page.replace("<head>", f"<head>\n    <title>{html.escape(title)}</title>", 1)


def make_server(command: str, host: str, port: int, token: str | None, title: str = "rewindtui") -> Any:
    """A textual-serve server for ``command`` with the token and origin checks in front."""
    from aiohttp import web
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()

            @web.middleware
            async def guard(request: web.Request, handler: Callable[..., Any]) -> Any:
                own = {request.host, f"{host}:{port}"}
                ok, set_cookie = allowed(
                    request.path,
                    request.query,
                    request.cookies,
                    request.headers,
                    token,
                    own,
                    loopback_only=is_loopback(host),
                )
                if not ok:
                    raise web.HTTPForbidden(
                        text="rewindtui web: open the URL with ?token=... that `rewindtui web` printed\n"
                    )
                response = await handler(request)
                if request.path == "/" and isinstance(response, web.Response) and response.content_type == "text/html":
                    response.text = with_title(response.text or "", title)
                if set_cookie and token is not None:
                    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
                return response

            app.middlewares.insert(0, guard)
            return app

    shown = f"[{host}]" if ":" in host else host
    return GuardedServer(command, host=host, port=port, title=title, public_url=f"http://{shown}:{port}")


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "web",
        help="serve the app in a browser (textual-serve)",
        description=(
            "Serve the app to a browser: each tab runs the app with these connection options. Loopback "
            "only by default; bound to another address it needs a token (random and printed, or from "
            "--token-env / --token-file)."
        ),
    )
    connection_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--token-env", metavar="VAR", help="the access token from this environment variable")
    p.add_argument("--token-file", metavar="PATH", help="the access token from this file")
    p.add_argument(
        "--no-token", action="store_true", help="no token even when bound beyond loopback (behind your own auth proxy)"
    )


def resolve_token(args: argparse.Namespace) -> str | None:
    if getattr(args, "token_env", None) or getattr(args, "token_file", None):
        ref = SecretRef(env=args.token_env, file=Path(args.token_file) if args.token_file else None)
        return ref.resolve(where="--token-env" if args.token_env else "--token-file")
    if is_loopback(args.host) or getattr(args, "no_token", False):
        return None
    token = secrets.token_urlsafe(24)
    register_secret(token)
    return token


def main(settings: Settings, args: argparse.Namespace) -> int:
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        raise SystemExit(
            "rewindtui: error: `rewindtui web` needs textual-serve: pip install 'rewindtui[web]'"
        ) from None
    from rewindtui.client.auth import AuthError

    try:
        token = resolve_token(args)
    except AuthError as exc:
        sys.stderr.write(f"rewindtui: error: {exc}\n")
        return 2
    agent = getattr(args, "agent", None)
    title = f"rewindtui · {agent}" if agent else "rewindtui"  # the browser tab's name
    server = make_server(app_command(args), args.host, args.port, token, title=title)
    url = server.public_url + "/"
    # the one place the token is shown: the URL the user opens
    sys.stderr.write(f"rewindtui web: open {url}{'?token=' + token if token else ''}\n")
    sys.stderr.flush()
    server.serve()
    return 0
