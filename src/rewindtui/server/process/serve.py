"""``rewindtui serve``: run the agent server in the foreground.

::

    rewindtui serve [--host 127.0.0.1] [--port 0] [--data-dir DIR] [--model NAME] [--demo-delay S]
                    [--allow-host NAME]

The first stdout line is ``serving on http://HOST:PORT`` (the real port when 0 is asked),
printed once the server accepts connections; the next says the agent URL to give
``rewindtui --url``; then the bearer token when one was made up, and the gRPC address (``gRPC:
HOST:PORT``, when grpcio is installed). Ctrl+C or SIGTERM stops it cleanly (exit status 0). Logs go to stderr.
The model defaults to the offline demo model; see :mod:`rewindtui.server.agent.agent` for ``--model``
ids.

One server per data directory: a second one on the same directory is refused, naming the
first (``instance.py``). Bound to anything but loopback, the server requires a bearer token:
``REWINDTUI_SERVER_TOKEN``, or a random one printed at start. ``--exit-on-stdin-eof`` (how
``spawn_server`` starts it) makes it a shared server for the apps on its data directory: it
stops once the app that started it (its stdin closes) and every app that attached since are
gone. With ``--keep-seconds S`` it stays up S seconds more after that (the next app on the data
directory attaches to it at once); ``rewindtui serve --stop [--data-dir DIR]`` stops the server
on a data directory.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from rewindtui.server.agent.model_options import (
    DEFAULT_MODEL_RETRIES,
    DEFAULT_MODEL_TIMEOUT,
    DEFAULT_STALL_TIMEOUT,
    DEMO_MODEL_NAME,
    ModelOptions,
    model_problem,
)
from rewindtui.server.http.options import (
    DATABASE_URL_ENV,
    TOKEN_ENV,
    ServerOptions,
    database_url_problem,
    is_loopback,
    normalized_database_url,
)
from rewindtui.server.process.instance import DataDirBusy, DataDirHold, DataDirUnusable
from rewindtui.server.process.spawn import default_data_dir
from rewindtui.server.shared.paths import AGENT_PATH, API_PATH, DATA_FILES

#: The shortest bearer token accepted for a server reachable beyond loopback.
MIN_TOKEN_CHARS = 32
#: the cyclic collector's thresholds once the app is loaded (see ``loaded`` in :func:`main`)
GC_THRESHOLDS = (20_000, 20, 100)


#: an app's server loads the agent runtime after this long with no early request (front.py)
LOAD_WHEN_IDLE = 0.2


def listen_text(host: str, port: int) -> str:
    """Where the server listens, in words (``0.0.0.0`` / ``::`` are every interface)."""
    shown = f"[{host}]" if ":" in host else host
    every = host in ("0.0.0.0", "::", "")
    return f"http://{shown}:{port}" + (" (every interface of this machine: use its address or name)" if every else "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewindtui serve", description="Run rewindtui's local A2A agent server (rewind and fork built in)."
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default: 0)")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"where sessions are stored (default: {default_data_dir()})"
    )
    parser.add_argument(
        "--model",
        default=None,
        help=(
            "model: 'demo' (default, offline), 'demo-slow' (the demo model streaming a few words every quarter "
            "second: try stopping a reply), a LiteLLM id such as 'openai/gpt-4o-mini' or "
            "'ollama_chat/llama3.2' (pip install 'rewindtui[models]'), or an ADK id such as 'gemini-2.5-flash'"
        ),
    )
    parser.add_argument(
        "--model-base-url", default=None, metavar="URL", help="an OpenAI-compatible endpoint for the model"
    )
    parser.add_argument(
        "--model-timeout",
        type=_seconds,
        default=DEFAULT_MODEL_TIMEOUT,
        metavar="S",
        help=f"seconds one model request may take (default: {DEFAULT_MODEL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--stall-timeout",
        type=_seconds,
        default=DEFAULT_STALL_TIMEOUT,
        metavar="S",
        help=f"seconds a turn may go without news from the agent before it fails (default: {DEFAULT_STALL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--model-retries",
        type=int,
        default=DEFAULT_MODEL_RETRIES,
        metavar="N",
        help=f"retries of a model request that failed for a passing reason (default: {DEFAULT_MODEL_RETRIES})",
    )
    parser.add_argument(
        "--demo-delay", type=float, default=0.0, help="seconds between the demo model's streamed deltas"
    )
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help=f"keep everything in this PostgreSQL database (postgresql+asyncpg://USER:PASSWORD@HOST/DB): a team "
        f"server, several replicas on one database (also {DATABASE_URL_ENV}, or database_url in the config "
        "file's [server] table; default: SQLite files in --data-dir)",
    )
    parser.add_argument(
        "--users",
        action="store_true",
        help="a server with users: every request carries its user's own bearer token (made with "
        "'rewindtui team token NAME'), sessions are their user's, shared with 'rewindtui team share'",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also accept requests whose Host header names NAME (loopback names always are)",
    )
    parser.add_argument(
        "--push-allow",
        action="append",
        default=None,
        metavar="RANGES",
        help="let push notifications go to these non-public addresses: loopback, private, link-local or a CIDR "
        "(comma separated, repeatable; default: none, or REWINDTUI_PUSH_ALLOW)",
    )
    parser.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="serve the apps on this data dir and stop once they are all gone, the one that "
        "started it first (its stdin closes)",
    )
    parser.add_argument(
        "--keep-seconds",
        type=_seconds,
        default=None,
        metavar="S",
        help="with --exit-on-stdin-eof: stay up S seconds after the last app is gone (the next app attaches at once)",
    )
    parser.add_argument(
        "--stop",
        action="store_true",
        help="stop the server running on the data directory (e.g. one kept up by --keep-server), then exit",
    )
    return parser


def config_database_url(env: dict[str, str] | None = None) -> str | None:
    """``database_url`` of the config file's ``[server]`` table (``REWINDTUI_CONFIG`` or the
    default config path), or None. Raises ValueError (one line) for a file that says it wrong."""
    import tomllib

    from rewindtui.base.dirs import default_config_path

    env = dict(os.environ) if env is None else env
    path = (
        Path(env["REWINDTUI_CONFIG"]).expanduser() if env.get("REWINDTUI_CONFIG", "").strip() else default_config_path()
    )
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    table = data.get("server", {})
    value = table.get("database_url") if isinstance(table, dict) else None
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{path}: server.database_url: expected a database URL, got {value!r}")
    return normalized_database_url(value)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _say(text: str) -> None:
    """One line on stdout, for whoever reads it: the app that spawned this server reads the first
    and may be gone by the next (with --keep-seconds it does not wait for this server to stop)."""
    try:
        print(text, flush=True)
    except (BrokenPipeError, ValueError):
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")


def _watch_stdin(on_eof: Any) -> None:
    """Call ``on_eof()`` once stdin reaches EOF: the parent closed it or died."""

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(65536):
                pass
        except (OSError, ValueError):
            pass
        on_eof()

    threading.Thread(target=watch, name="rewindtui-stdin-watch", daemon=True).start()


def stop_server(data_dir: Path, timeout: float = 30.0) -> int:
    """``serve --stop``: stop the server that serves ``data_dir`` (SIGTERM: it stops as on
    Ctrl+C, running turns stored canceled) and wait until it let the directory go."""
    from rewindtui.server.process.instance import LOCK_FILE, FileLock
    from rewindtui.server.process.spawn import ServerStartError, running_server

    try:
        state = running_server(data_dir, timeout=5.0)
    except ServerStartError as exc:
        print(f"rewindtui serve --stop: {exc}", file=sys.stderr)
        return 1
    if state is None:
        print(f"no server is running on {data_dir}")
        return 0
    try:
        os.kill(state.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except OSError as exc:
        print(f"rewindtui serve --stop: cannot stop pid {state.pid}: {exc}", file=sys.stderr)
        return 1
    lock = FileLock(data_dir / LOCK_FILE)
    freed = threading.Thread(target=lock.acquire, kwargs={"wait": True}, name="rewindtui-stop-wait", daemon=True)
    freed.start()
    freed.join(timeout)  # the lock is free once the server has stopped
    if freed.is_alive():
        print(
            f"rewindtui serve --stop: the server (pid {state.pid}) did not stop within {timeout:g} s", file=sys.stderr
        )
        return 1
    lock.release()
    print(f"stopped the server on {data_dir} (pid {state.pid})")
    return 0


def main(argv: list[str] | None = None) -> int:
    # The front's modules (starlette, uvicorn, the store) make tens of thousands of objects that
    # live as long as the server, none of them garbage: the cyclic collector is paused until the
    # front serves (its passes were about 0.008 s of the front's start, which an app launching
    # beside it waits for), then what they made is frozen out of its way (``announce`` below)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, collector=enabled)
    finally:
        if enabled:
            gc.enable()


def _main(argv: list[str] | None, *, collector: bool) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print("rewindtui serve: --port must be between 0 and 65535", file=sys.stderr)
        return 2
    data_dir: Path = args.data_dir if args.data_dir is not None else default_data_dir()
    if args.stop:
        return stop_server(data_dir)
    model_options = ModelOptions(
        base_url=args.model_base_url,
        timeout=args.model_timeout,
        stall_timeout=args.stall_timeout,
        retries=max(0, args.model_retries),
    )
    options, generated_token = replace(
        ServerOptions.from_env(), allowed_hosts=tuple(args.allow_host), model=model_options, users=args.users
    ).for_bind(args.host)
    if args.push_allow is not None:
        options = replace(options, push_allow=tuple(args.push_allow))
    try:
        from rewindtui.server.http.push_screen import parse_allow

        parse_allow(options.push_allow or ())
    except ValueError as exc:
        print(f"rewindtui serve: {exc}", file=sys.stderr)
        return 2

    problem = model_problem(args.model)
    if problem is not None:
        print(f"rewindtui serve: {problem}", file=sys.stderr)
        return 2
    try:
        database_url = normalized_database_url(args.database_url) or options.database_url or config_database_url()
    except ValueError as exc:
        print(f"rewindtui serve: {exc}", file=sys.stderr)
        return 2
    problem = database_url_problem(database_url)
    if problem is not None:
        print(f"rewindtui serve: {problem}", file=sys.stderr)
        return 2
    options = replace(options, database_url=database_url)
    if args.users and options.token is not None:
        print(f"rewindtui serve: --users takes each user's own token; unset {TOKEN_ENV}", file=sys.stderr)
        return 2
    from rewindtui.server.http.control import Clients, control_routes
    from rewindtui.server.http.front import Front
    from rewindtui.server.process.uvicorn_server import ManagedServer, base_url_for, bind_socket, make_config

    if options.token is not None and not is_loopback(args.host) and len(options.token) < MIN_TOKEN_CHARS:
        print(
            f"rewindtui serve: the bearer token ({TOKEN_ENV}) has {len(options.token)} characters; "
            f"a server reachable beyond loopback needs at least {MIN_TOKEN_CHARS} (unset it for a random one)",
            file=sys.stderr,
        )
        return 2
    hold = DataDirHold(data_dir, DATA_FILES)
    try:
        hold.acquire()
    except (DataDirBusy, DataDirUnusable, OSError) as exc:
        print(f"rewindtui serve: {exc}", file=sys.stderr)
        return 1
    from rewindtui.server.storage.integrity import DataDirProblem, check_data_dir
    from rewindtui.server.storage.start_failure import StartLog, describe_start_failure

    try:
        for note in check_data_dir(data_dir):
            print(f"rewindtui serve: note: {note}", file=sys.stderr)
    except DataDirProblem as exc:  # one line naming the file and what to do (no traceback)
        hold.release()
        print(f"rewindtui serve: {exc}", file=sys.stderr)
        if args.exit_on_stdin_eof:
            print(f"error: {exc}", flush=True)  # the spawning app shows its first stdout line
        return 1
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        hold.release()
        print(f"rewindtui serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    server: Any = None
    try:
        base_url = base_url_for(args.host, sock.getsockname()[1])

        def stop() -> None:
            server.should_exit = True

        clients: Clients
        if args.exit_on_stdin_eof and args.keep_seconds:
            from rewindtui.server.process.linger import LingeringClients

            clients = LingeringClients(args.keep_seconds, stop)
        else:
            clients = Clients(on_unused=stop if args.exit_on_stdin_eof else None)

        def build() -> Any:
            # google-adk, a2a-sdk, the model's library: seconds of imports, on the front's worker
            # thread while the front already answers
            from rewindtui.server.http.app import create_app

            return create_app(
                data_dir,
                base_url,
                model=args.model,
                demo_delay=args.demo_delay,
                options=options,
                bind_host=args.host,
                clients=clients,
                instance=hold.instance,
            )

        def card() -> dict[str, Any]:
            # rendered without a2a-sdk (its server half takes a second to import): a fresh data
            # directory answers the card as soon as a warm one
            from rewindtui.server.http.front_card import plain_agent_card
            from rewindtui.server.shared.paths import AGENT_NAME

            return plain_agent_card(
                agent_url=base_url + AGENT_PATH,
                api_url=base_url + API_PATH,
                name=AGENT_NAME,
                model=args.model or DEMO_MODEL_NAME,
                needs_token=options.token is not None,
                users=options.users,
            )

        start = StartLog(data_dir)

        def loaded(app: Any) -> None:
            start.done()
            # Everything loaded so far (google-adk, a2a-sdk, ...) lives as long as the process:
            # keep the cyclic GC from re-scanning it on every full collection. A turn allocates
            # thousands of short-lived objects (pydantic events, protos, dicts): collect the young
            # generation every 20,000 allocations instead of 700 (about 13% less CPU per turn
            # under bench/bench_throughput.py's load).
            gc.collect()
            gc.freeze()
            gc.set_threshold(*GC_THRESHOLDS)
            # the gRPC port listens once the full app is up (grpc_listener.py): said then
            for interface in app.state.agent_card.get("supportedInterfaces", ()):
                if interface.get("protocolBinding") == "GRPC":
                    agent_url = base_url + AGENT_PATH
                    _say(f"gRPC: {interface['url']}  (rewindtui --url {agent_url} --binding grpc)")

        def describe() -> dict[str, Any]:  # as the full app's (app.py): who this server is
            return {
                "instance": hold.instance,
                "pid": os.getpid(),
                "agent_url": base_url + AGENT_PATH,
                "api_url": base_url + API_PATH,
                "data_dir": str(data_dir),
            }

        front = Front(
            data_dir,
            control=control_routes(describe=describe, clients=clients),
            build=build,
            card=card,
            options=options,
            bind_host=args.host,
            on_loaded=loaded,
            on_failed=lambda: setattr(server, "should_exit", True),
            # an app's own server: the agent loads once the app has opened its session
            load_when_idle=LOAD_WHEN_IDLE if args.exit_on_stdin_eof else None,
        )

        def announce() -> None:
            gc.freeze()  # the front's modules: see main()
            if collector:
                gc.enable()
            state = hold.publish(
                base_url=base_url, agent_url=base_url + AGENT_PATH, api_url=base_url + API_PATH, token=options.token
            )
            _say(f"serving on {base_url}")
            _say(f"agent URL: {state.agent_url}  (rewindtui --url {state.agent_url})")
            if generated_token:
                _say(
                    f"bearer token: {options.token}  (clients send Authorization: Bearer …; "
                    f"set {TOKEN_ENV} to choose it)"
                )
            if not is_loopback(args.host):
                _say(f"listening on {listen_text(args.host, sock.getsockname()[1])}")
            if args.exit_on_stdin_eof:
                loop = asyncio.get_running_loop()
                parent = os.getppid()
                clients.add(parent)
                _watch_stdin(lambda: loop.call_soon_threadsafe(clients.remove, parent))

        server = ManagedServer(
            make_config(front, log_level=args.log_level), on_ready=announce, before_shutdown=front.before_shutdown
        )
        with start:  # a failed start: one line here, the traceback in server.log
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except SystemExit:  # uvicorn: the front's startup failed (said below)
                pass
        error = front.error or (None if server.started else start.error)
        if error is not None or (not server.started and start.message):
            line = describe_start_failure(data_dir, error, start.message)
            print(f"rewindtui serve: {line}", file=sys.stderr)
            if args.exit_on_stdin_eof:
                print(f"error: {line}", flush=True)  # the spawning app shows its first stdout line
            return 1
        return 0 if server.started else 1
    except KeyboardInterrupt:  # a second Ctrl+C while shutting down
        return 0
    finally:
        sock.close()
        hold.release()


if __name__ == "__main__":
    raise SystemExit(main())
