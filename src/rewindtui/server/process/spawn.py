"""Run the server in a child process -- a light module (stdlib imports only).

The app uses this instead of :class:`EmbeddedServer` so that google-adk's
heavy import happens in another process and never delays the first paint::

    server = spawn_server(default_data_dir())
    ...  # server.agent_url, server.api_url
    server.stop()

The child is ``python -m rewindtui.server.process.serve ... --exit-on-stdin-eof`` (the
same ``main()`` that ``rewindtui serve`` runs, without loading the CLI). It
prints ``serving on http://HOST:PORT`` as its first stdout line once it accepts
connections; everything else it logs goes to stderr, which is written to
``server.log`` in the data directory. Its stdin is a pipe held by this
process: when this process exits -- even killed -- the pipe closes and the
server shuts itself down (once no other app uses it), so it never outlives the apps.

The child gets a random bearer token in its environment (``REWINDTUI_SERVER_TOKEN``, never on
its command line, where other users could read it); ``server.token`` is what clients send.

One server per data directory: when a healthy server already serves ``data_dir`` (its
``server.json``, see :mod:`rewindtui.server.process.instance`), ``spawn_server`` attaches to it
instead and returns an :class:`AttachedServer`, whose ``stop()`` only detaches.

Started early: the app calls :func:`prespawn` as soon as it knows its settings, before it imports
Textual and its screens, so the server starts while the app loads; the app's own
``spawn_server`` call (same arguments) then takes that server instead of starting another.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from rewindtui.base.dirs import default_data_dir
from rewindtui.server.agent.model_options import ModelOptions
from rewindtui.server.http.options import PUSH_ALLOW_ENV, TOKEN_ENV, is_loopback
from rewindtui.server.process.instance import (
    LOCK_FILE,
    SPAWN_LOCK_FILE,
    FileLock,
    ServerState,
    attach,
    clients,
    detach,
    healthy,
    new_token,
    read_state,
)
from rewindtui.server.shared.paths import AGENT_PATH as AGENT_SUFFIX
from rewindtui.server.shared.paths import API_PATH as API_SUFFIX
from rewindtui.server.shared.pids import alive

READY_PREFIX = "serving on "
LOG_FILE = "server.log"


class ServerStartError(RuntimeError):
    """The child process exited or stayed silent instead of announcing its address."""


class ServerUrls:
    """The URLs of a running server, derived from its ``base_url``."""

    base_url: str

    @property
    def agent_url(self) -> str:
        return self.base_url + AGENT_SUFFIX

    @property
    def api_url(self) -> str:
        return self.base_url + API_SUFFIX


class SpawnedServer(ServerUrls):
    """A running server child process."""

    def __init__(
        self,
        process: subprocess.Popen[str],
        base_url: str,
        data_dir: Path,
        token: str | None = None,
        *,
        keep: float | None = None,
    ) -> None:
        self.process = process
        self.base_url = base_url
        self.data_dir = data_dir
        self.token = token
        self.keep = keep  # seconds it stays up after its last app (None: it stops with it)
        self._shared = False  # at its stop, another app still used it: let go, not stopped

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> int | None:
        """Stop the child: close its stdin (it shuts down cleanly), then terminate, then kill.

        Returns its exit status (0 for a clean stop). Safe to call twice. A server started with
        ``keep`` is only let go (its stdin closed): it stops by itself once its idle window passed
        (None is returned). So is one that another app still uses (it attached since): the
        server goes on for it and stops by itself after the last app.
        """
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            if not self.keep and self.process.poll() is None:
                self._shared = bool(set(clients(self.base_url, self.token) or ()) - {os.getpid()})
        if self.keep or self._shared:
            if self.process.stdout is not None:
                self.process.stdout.close()
            return self.process.poll()
        for step in (None, self.process.terminate, self.process.kill):
            if self.process.poll() is not None:
                break
            if step is not None:
                step()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                continue
        if self.process.stdout is not None:
            self.process.stdout.close()
        return self.process.returncode

    def __enter__(self) -> SpawnedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SpawnedServer(pid={self.process.pid}, {self.base_url})"


class AttachedServer(ServerUrls):
    """A server another app started on the same data directory, used by this process too."""

    def __init__(self, state: ServerState, data_dir: Path) -> None:
        self.state = state
        self.base_url = state.base_url
        self.data_dir = data_dir
        self.token = state.token
        self._attached = True

    @property
    def pid(self) -> int:
        return self.state.pid

    @property
    def running(self) -> bool:
        return alive(self.state.pid)

    def stop(self, timeout: float = 10.0) -> None:
        """Detach: the server goes on for its other apps (and stops by itself after the last)."""
        if self._attached:
            self._attached = False
            detach(self.state, os.getpid())

    def __enter__(self) -> AttachedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"AttachedServer(pid={self.state.pid}, {self.base_url})"


def running_server(data_dir: Path, timeout: float = 30.0) -> ServerState | None:
    """The healthy server serving ``data_dir``, if one does; None if none does.

    Raises :class:`ServerStartError` when a process holds the directory but does not answer as
    its ``server.json`` says within ``timeout`` seconds.
    """
    lock = FileLock(data_dir / LOCK_FILE)
    if lock.acquire(wait=False):
        lock.release()
        return None
    deadline = time.monotonic() + timeout
    while True:
        state = read_state(data_dir)
        if state is not None and healthy(state):
            return state
        if time.monotonic() > deadline:
            who = state.describe() if state is not None else "another process"
            raise ServerStartError(
                f"{data_dir} is in use by {who}, which does not answer; stop it or use another data directory"
            )
        time.sleep(0.1)


def server_command(
    data_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    model: str | None = None,
    demo_delay: float = 0.0,
    python: str | None = None,
    model_options: ModelOptions | None = None,
    keep: float | None = None,
) -> list[str]:
    cmd = [
        python or sys.executable,
        "-m",
        "rewindtui.server.process.serve",
        "--host",
        host,
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        "--exit-on-stdin-eof",
    ]
    if model:
        cmd += ["--model", model]
    if demo_delay:
        cmd += ["--demo-delay", str(demo_delay)]
    if model_options is not None:
        cmd += model_options.args()
    if keep:
        cmd += ["--keep-seconds", f"{keep:g}"]
    if is_loopback(host) and PUSH_ALLOW_ENV not in os.environ:
        cmd += ["--push-allow", "loopback"]  # the app's own push receiver listens on loopback
    return cmd


class _Early:
    """A :func:`spawn_server` call already under way on a thread (:func:`prespawn`)."""

    def __init__(self, key: tuple[object, ...], kwargs: dict[str, object]) -> None:
        self.key = key
        self.done = threading.Event()
        self.server: SpawnedServer | AttachedServer | None = None
        self.error: BaseException | None = None
        self.claimed = False
        self._kwargs = kwargs

    def run(self) -> None:
        try:
            self.server = _start(**self._kwargs)  # type: ignore[arg-type]
        except BaseException as exc:  # handed to the caller that claims it
            self.error = exc
        finally:
            self.done.set()


_early_lock = threading.Lock()
_early: _Early | None = None


def _key(
    data_dir: Path, model: str | None, demo_delay: float, model_options: ModelOptions | None, keep: float | None
) -> tuple[object, ...]:
    options = tuple(model_options.args()) if model_options is not None else ()  # None: the defaults
    return (str(Path(data_dir).resolve()), model or "", float(demo_delay), options, keep)


def prespawn(
    data_dir: Path,
    *,
    model: str | None = None,
    demo_delay: float = 0.0,
    model_options: ModelOptions | None = None,
    keep: float | None = None,
) -> None:
    """Start (or attach to) the server for ``data_dir`` on a thread, now; the next
    :func:`spawn_server` call with the same arguments (and no ``command``, ``env``, host or port
    of its own) waits for this one and returns its server. An early server nobody claimed is
    stopped by :func:`discard_prespawned` (or, at the latest, when this process exits: its stdin
    pipe closes)."""
    global _early
    kwargs: dict[str, object] = {
        "data_dir": Path(data_dir),
        "model": model,
        "demo_delay": demo_delay,
        "model_options": model_options,
        "keep": keep,
    }
    early = _Early(_key(Path(data_dir), model, demo_delay, model_options, keep), kwargs)
    with _early_lock:
        if _early is not None and not _early.claimed:
            return  # one is under way already
        _early = early
    threading.Thread(target=early.run, name="rewindtui-prespawn", daemon=True).start()


def _claim(key: tuple[object, ...]) -> _Early | None:
    global _early
    with _early_lock:
        early = _early
        if early is None or early.claimed or early.key != key:
            return None
        early.claimed = True
        _early = None
    return early


def discard_prespawned() -> None:
    """Stop the early server nobody claimed (the app quit before it connected)."""
    global _early
    with _early_lock:
        early, _early = _early, None
        if early is None or early.claimed:
            return
        early.claimed = True
    early.done.wait()
    if early.server is not None:
        early.server.stop()


def spawn_server(
    data_dir: Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    model: str | None = None,
    demo_delay: float = 0.0,
    timeout: float = 60.0,
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    share: bool = True,
    model_options: ModelOptions | None = None,
    keep: float | None = None,
) -> SpawnedServer | AttachedServer:
    """Start the server in a child process and return once it accepts connections -- or, with
    ``share`` (and no ``command``), attach to the server already serving ``data_dir``.

    ``command`` replaces the default child command line (it must print the
    ``serving on`` line). ``keep``: seconds the server stays up after its last app is gone (the
    next app on ``data_dir`` attaches to it); None: it stops with its last app. Raises
    :class:`ServerStartError` when the child exits
    or says nothing for ``timeout`` seconds (it is killed then).
    """
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    if share and command is None and env is None and host == "127.0.0.1" and port == 0:
        early = _claim(_key(data_dir, model, demo_delay, model_options, keep))
        if early is not None:  # started by prespawn(): wait for it (no polling: an event)
            if not early.done.wait(timeout):
                raise ServerStartError(f"the server on {data_dir} did not start within {timeout:g} s")
            if early.error is not None:
                raise early.error
            assert early.server is not None
            return early.server
    return _start(
        data_dir,
        host=host,
        port=port,
        model=model,
        demo_delay=demo_delay,
        timeout=timeout,
        command=command,
        env=env,
        share=share,
        model_options=model_options,
        keep=keep,
    )


def _start(
    data_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    model: str | None = None,
    demo_delay: float = 0.0,
    timeout: float = 60.0,
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    share: bool = True,
    model_options: ModelOptions | None = None,
    keep: float | None = None,
) -> SpawnedServer | AttachedServer:
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # private from the start (integrity.py)
    spawn_lock = FileLock(data_dir / SPAWN_LOCK_FILE)
    spawn_lock.acquire(wait=True)  # one app at a time decides to start or to attach
    try:
        if share and not command:
            state = running_server(data_dir, timeout=min(timeout, 30.0))
            if state is not None:
                attach(state, os.getpid())
                return AttachedServer(state, data_dir)
        return _spawn(data_dir, host, port, model, demo_delay, timeout, command, env, model_options, keep)
    finally:
        spawn_lock.release()


def _spawn(
    data_dir: Path,
    host: str,
    port: int,
    model: str | None,
    demo_delay: float,
    timeout: float,
    command: Sequence[str] | None,
    env: dict[str, str] | None,
    model_options: ModelOptions | None = None,
    keep: float | None = None,
) -> SpawnedServer:
    cmd = (
        list(command)
        if command
        else server_command(
            data_dir, host=host, port=port, model=model, demo_delay=demo_delay, model_options=model_options, keep=keep
        )
    )
    token = new_token()
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    child_env[TOKEN_ENV] = token
    with open(data_dir / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=child_env,
            # its own session: the terminal's signals (Ctrl+C in `rewindtui send`, a hang-up) are
            # not its business -- it stops when its apps are gone (its stdin) -- and the
            # scheduler gives it its own share (autogroup) instead of taking the app's while both start
            start_new_session=True,
        )
    first_line: list[str] = []
    reader = threading.Thread(
        target=lambda: first_line.append(process.stdout.readline() if process.stdout else ""),
        name="rewindtui-spawn-reader",
        daemon=True,
    )
    reader.start()
    reader.join(timeout)
    if reader.is_alive() or not first_line or not first_line[0].startswith(READY_PREFIX):
        process.kill()
        process.wait()
        reader.join()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
        said = first_line[0].strip() if first_line else ""
        raise ServerStartError(
            f"the server did not start (exit status {process.returncode}; first line {said!r}); "
            f"see {data_dir / LOG_FILE}"
        )
    base_url = first_line[0][len(READY_PREFIX) :].strip().rstrip("/")
    return SpawnedServer(process, base_url, data_dir, token, keep=keep)
