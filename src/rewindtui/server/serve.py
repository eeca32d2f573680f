"""``rewindtui serve``: run the agent server in the foreground.

::

    rewindtui serve [--host 127.0.0.1] [--port 0] [--data-dir DIR] [--model NAME] [--demo-delay S]

The first stdout line is ``serving on http://HOST:PORT`` (the real port when 0
is asked), printed once the server accepts connections. Ctrl+C or SIGTERM
stops it cleanly (exit status 0), and so does the end of stdin with
``--exit-on-stdin-eof`` (how ``spawn_server`` makes sure the server never
outlives the app that started it). Logs go to stderr. The model defaults to the
offline demo model; see :mod:`rewindtui.server.agent` for ``--model`` ids.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import threading
from pathlib import Path
from typing import Any

from rewindtui.server.spawn import default_data_dir


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
        help="ADK model id: 'demo' (default, offline), e.g. 'gemini-2.5-flash' (GOOGLE_API_KEY) "
        "or 'litellm/<provider>/<model>' (needs litellm)",
    )
    parser.add_argument(
        "--demo-delay", type=float, default=0.0, help="seconds between the demo model's streamed deltas"
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="stop when stdin closes (a parent process that started this server went away)",
    )
    return parser


def _watch_stdin(server: Any) -> None:
    """Stop ``server`` once stdin reaches EOF: the parent closed it or died."""

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(65536):
                pass
        except (OSError, ValueError):
            pass
        server.should_exit = True

    threading.Thread(target=watch, name="rewindtui-stdin-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print("rewindtui serve: --port must be between 0 and 65535", file=sys.stderr)
        return 2
    data_dir: Path = args.data_dir if args.data_dir is not None else default_data_dir()

    from rewindtui.server.agent import ModelConfigError
    from rewindtui.server.app import create_app
    from rewindtui.server.uvicorn_server import ManagedServer, base_url_for, bind_socket, make_config

    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        print(f"rewindtui serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    try:
        base_url = base_url_for(args.host, sock.getsockname()[1])
        try:
            app = create_app(data_dir, base_url, model=args.model, demo_delay=args.demo_delay)
        except ModelConfigError as exc:
            print(f"rewindtui serve: {exc}", file=sys.stderr)
            return 2

        def announce() -> None:
            # Everything loaded so far (google-adk, a2a-sdk, ...) lives as long as the process:
            # keep the cyclic GC from re-scanning it on every full collection.
            gc.collect()
            gc.freeze()
            print(f"serving on {base_url}", flush=True)

        server = ManagedServer(
            make_config(app, log_level=args.log_level),
            on_ready=announce,
            before_shutdown=app.state.parts.service.shutdown,
        )
        if args.exit_on_stdin_eof:
            _watch_stdin(server)
        asyncio.run(server.serve(sockets=[sock]))
        return 0 if server.started else 1
    except KeyboardInterrupt:  # a second Ctrl+C while shutting down
        return 0
    finally:
        sock.close()


if __name__ == "__main__":
    raise SystemExit(main())
