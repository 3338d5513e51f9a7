"""`sleuth serve`, `sleuth worker` and `sleuth keys`: the HTTP service, the task
workers and the service's API keys.

`sleuth serve` prints where the API, the MCP endpoint and the OpenAPI page are, then
runs uvicorn until SIGINT or SIGTERM; shutdown gives running tasks
`serve.shutdown_grace_s` to finish and puts the rest back in the queue. With
`--no-workers` it only accepts and reports tasks: `sleuth worker` processes, sharing
its store (Redis when scaled out), run them.

`sleuth worker` runs tasks and nothing else (no HTTP): a `TaskRunner` over the
configured store, `--concurrency` tasks at once. Execution is at-least-once with
idempotent completion (the store's leases, see `sleuth.tasks`): a worker killed
mid-task leaves its lease to run out and another worker runs the task again; only
the lease holder can finish it. SIGTERM or SIGINT stops it gracefully (running tasks
get `serve.shutdown_grace_s`, the rest go back to the queue); a second signal puts
the running ones back at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from sleuth.api.cli_help import ReadableHelpGroup

if TYPE_CHECKING:
    from sleuth.api.connection_share import ConnectionShare, Counts
    from sleuth.config import Settings
    from sleuth.store import Store

__all__ = ["keys_app", "run_worker", "serve_command", "worker_command"]

log = logging.getLogger("sleuth.worker")

keys_app = typer.Typer(
    help="API keys of the HTTP service.", no_args_is_help=True, cls=ReadableHelpGroup
)


class KeyRoleName(StrEnum):
    tenant = "tenant"
    admin = "admin"


ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
]


def _err(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error[/]: {message}", highlight=False)


def _settings(config: Path | None, replay: Path | None = None) -> Settings:
    """The settings, or exit 1 with what is wrong with them (never a traceback)."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    overrides: dict[str, Any] = {"replay": replay} if replay is not None else {}
    try:
        return load_settings(config, **overrides)
    except SearchError as exc:
        _err(exc.message)
        raise typer.Exit(1) from None


def serve_command(
    host: Annotated[
        str | None, typer.Option("--host", help="Address to bind (default: serve.host).")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="Port to bind (default: serve.port)."),
    ] = None,
    config: ConfigOption = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Every provider answers from this cassette.")
    ] = None,
    workers: Annotated[
        bool,
        typer.Option(
            "--workers/--no-workers",
            help="Run tasks in this process too; --no-workers leaves them to `sleuth worker`.",
        ),
    ] = True,
    processes: Annotated[
        int | None,
        typer.Option(
            "--processes",
            min=0,
            max=64,
            help="Worker processes on the one port (default: serve.processes; 0: one per core).",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API, server-sent task events and MCP (at /mcp)."""
    from sleuth.service_settings import is_loopback

    settings = _settings(config, replay)
    count = _process_count(settings, processes)
    bind = host or settings.serve.host
    bind_port = settings.serve.port if port is None else port
    if settings.serve.auth == "off" and not is_loopback(bind):
        _err(f"serve.auth is off, which is refused on {bind}: bind to 127.0.0.1 or turn auth on")
        raise typer.Exit(1)
    auth = "on" if settings.serve.auth_required(bind) else "off (loopback only)"
    # Bound before the banner, so that the banner names the port really listened on
    # and a port in use is said plainly instead of after it.
    try:
        listening = socket.create_server((bind, bind_port))
    except OSError as exc:
        _err(f"cannot listen on {bind}:{bind_port}: {exc.strerror or exc}")
        raise typer.Exit(1) from None
    bind_port = listening.getsockname()[1]
    if count > 1 and _SPREADS_CONNECTIONS:
        try:
            listening = _port_holder(listening)
        except OSError as exc:
            _err(f"cannot listen on {bind}:{bind_port}: {exc.strerror or exc}")
            raise typer.Exit(1) from None
    base = f"http://{bind}:{bind_port}"
    console = Console(soft_wrap=True)
    console.print(f"sleuth serving on [bold]{base}[/]  (API keys: {auth})", highlight=False)
    console.print(f"  API      {base}/v1/search   {base}/v1/tasks", highlight=False)
    console.print(f"  MCP      {base}/mcp", highlight=False)
    console.print(f"  OpenAPI  {base}/openapi.json   (docs: {base}/docs)", highlight=False)
    if replay is not None:
        console.print(f"  replay   every provider answers from {replay}", highlight=False)
    if not workers:
        console.print("  tasks    accepted here, run by `sleuth worker` processes", highlight=False)
    if count == 1:
        with listening:
            _serve(settings, bind, workers, listening)
        return
    console.print(
        f"  processes {count}, sharing the {settings.store.backend} store", highlight=False
    )
    with listening:
        _supervise(count, listening, config, replay, bind, workers, settings)


#: Linux spreads a port's new connections over the listening sockets that share it with
#: SO_REUSEPORT, by a hash (evened out by `sleuth.api.connection_share`). Workers
#: accepting from one shared socket are not spread: the first awake accepts every
#: connection waiting (asyncio accepts up to its backlog at a time), so a client's 16
#: keep-alive connections all went to one of two workers.
_SPREADS_CONNECTIONS = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")


def _port_holder(probe: socket.socket) -> socket.socket:
    """The port `probe` listens on, held by a socket that shares it (SO_REUSEPORT) and
    does not listen, so that it gets no connection: each worker listens on a socket of
    its own beside it (`_listen_beside`). `probe` is closed. Only sockets of the same
    user can share the port."""
    host, port = probe.getsockname()[:2]
    family = probe.family
    probe.close()
    return _bound_beside(host, port, family)


def _bound_beside(host: str, port: int, family: socket.AddressFamily) -> socket.socket:
    """A socket bound to the port with SO_REUSEPORT, not listening."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _listen_beside(holder: socket.socket) -> socket.socket:
    """A worker's own socket on the holder's port, bound but not yet listening: uvicorn
    listens on it once the app has started. A socket listening from the start got its
    share of the new connections while the worker was still starting (seconds, tens
    on a loaded machine), and they waited there although another worker already
    answered /readyz."""
    host, port = holder.getsockname()[:2]
    return _bound_beside(host, port, holder.family)


def _serve(
    settings: Settings,
    bind: str,
    workers: bool,
    listening: socket.socket,
    share: ConnectionShare | None = None,
) -> None:
    """One uvicorn server on the bound socket, with the wire limits of `serve.limits`
    (and, as one of several workers, its share of the connections)."""
    import uvicorn

    from sleuth.api.http import create_app
    from sleuth.api.service_gc import settle_for_service
    from sleuth.api.wire_protocol import limited_protocol

    class FrozenAtStartServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            settle_for_service()  # once the app is up

    app = create_app(settings, bound_host=bind, workers=workers)
    limits = settings.serve.limits
    served = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        http=limited_protocol(limits, share),
        timeout_keep_alive=limits.keep_alive_s,
    )
    FrozenAtStartServer(served).run(sockets=[listening])


_WORKER_SPEC = "SLEUTH_SERVE_WORKER_SPEC"


def _supervise(
    count: int,
    listening: socket.socket,
    config: Path | None,
    replay: Path | None,
    bind: str,
    workers: bool,
    settings: Settings,
) -> None:
    """`count` worker processes on the one bound socket until SIGTERM or SIGINT, which
    each gets in turn (a graceful stop). A worker that dies stops the others and
    `sleuth serve` exits 1: whatever runs it (systemd, a container) restarts the
    service whole, rather than this process hiding a crash loop."""
    import multiprocessing

    # Each worker builds its own app from the same sources: the config file, the
    # inherited SLEUTH_* environment and these arguments.
    os.environ[_WORKER_SPEC] = json.dumps(
        {
            "config": config and str(config.resolve()),
            "replay": replay and str(replay.resolve()),
            "bound_host": bind,
            "workers": workers,
            # The socket handed over holds the port; each worker listens beside it.
            "own_socket": _SPREADS_CONNECTIONS,
        }
    )
    with _shared_metrics_dir():
        _preload_for_workers()  # here: prometheus_client reads the metrics directory
        context = (
            multiprocessing.get_context("fork")
            if _can_fork()
            else multiprocessing.get_context("spawn")
        )
        # How many connections each worker holds, so that they even out (connection_share).
        counts = context.RawArray("q", count)
        processes = [
            context.Process(target=_worker_main, args=(listening, counts, slot))
            for slot in range(count)
        ]
        for process in processes:
            process.start()
        stopping: list[int] = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, _frame: stopping.append(signum))
        failed = None
        while not stopping and failed is None:
            time.sleep(0.2)
            failed = next((p for p in processes if not p.is_alive()), None)
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: running tasks get serve.shutdown_grace_s
        for process in processes:
            process.join(settings.serve.shutdown_grace_s + 10)
            if process.is_alive():
                process.kill()
                process.join()
    if failed is not None and not stopping:
        _err(f"a worker process exited with code {failed.exitcode}; stopping the others")
        raise typer.Exit(1)


def _preload_for_workers() -> None:
    """Import what every worker runs and load what its warm-up would (the segmenters'
    dictionaries, the public suffix list), once, here: forked workers start with it
    (shared, copy on write) instead of each spending seconds of CPU on it. Nothing
    here starts a thread or opens the store."""
    import aiohttp  # noqa: F401
    import croniter  # noqa: F401 - the task workers' schedules
    import uvicorn  # noqa: F401

    import sleuth.api.connection_share
    import sleuth.api.http
    import sleuth.api.service_gc
    import sleuth.api.wire_protocol  # noqa: F401
    from sleuth.kb.search import warm_up as warm_up_kb
    from sleuth.stages.query.rewrite import warm_up as warm_up_rewrite
    from sleuth.stages.verify.trust import warm_up as warm_up_trust

    for warm_up in (warm_up_rewrite, warm_up_trust, warm_up_kb):
        warm_up()


def _can_fork() -> bool:
    """Whether the workers can be forked: on Linux, when this process runs no other
    thread (a fork copies only the calling thread: a lock another held would stay
    locked in the child). Else they are spawned, fresh interpreters that import and
    warm up everything again."""
    if sys.platform != "linux":
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


@contextmanager
def _shared_metrics_dir() -> Iterator[None]:
    """The workers count into prometheus_client's files in one directory, so that
    /metrics, whichever worker answers it, shows all of them (a directory the operator
    set in PROMETHEUS_MULTIPROC_DIR is used and kept)."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        yield
        return
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="sleuth-metrics-")
    try:
        yield
    finally:
        shutil.rmtree(os.environ.pop("PROMETHEUS_MULTIPROC_DIR"), ignore_errors=True)


def _process_count(settings: Settings, asked: int | None) -> int:
    """How many processes `sleuth serve` runs: as asked (or `serve.processes`), 0 being
    one per core; one with a memory store, which no other process can share."""
    wanted = settings.serve.processes if asked is None else asked
    count = wanted or _usable_cores()
    if count > 1 and settings.store.backend == "memory":
        if wanted:
            _err(
                f"--processes {count} needs a store the processes share (store.backend: "
                "sqlite or redis); the memory store belongs to one process: use --processes 1"
            )
            raise typer.Exit(1)
        return 1
    return count


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a cpuset limits),
    not every core of the host."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _worker_main(listening: socket.socket, counts: Counts, slot: int) -> None:
    """One `sleuth serve --processes N` worker (in its own process), the `slot`-th
    of the shared connection counts."""
    from sleuth.api.connection_share import ConnectionShare
    from sleuth.config import load_settings

    _stop_with_parent()
    # Taken out of the environment: it is the supervisor's hand-over, not a setting.
    spec = json.loads(os.environ.pop(_WORKER_SPEC))
    settings = load_settings(
        spec["config"] and Path(spec["config"]),
        **({"replay": Path(spec["replay"])} if spec["replay"] else {}),
    )
    if spec["own_socket"]:
        with listening:
            mine = _listen_beside(listening)
        listening = mine
    share = ConnectionShare(counts, slot)
    _serve(settings, spec["bound_host"], spec["workers"], listening, share)


def worker_command(
    config: ConfigOption = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Every provider answers from this cassette.")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, max=256, help="Tasks run at once (default: tasks.workers)."
        ),
    ] = None,
) -> None:
    """Run tasks from the shared store, without HTTP, until SIGTERM or SIGINT."""
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    settings = _settings(config, replay)
    if settings.store.backend == "memory":
        # Nothing submitted elsewhere can reach a memory store: the worker would idle.
        _err("a worker needs a shared store (store: redis://... or sqlite), not memory")
        raise typer.Exit(1)
    if concurrency is not None:
        tasks = settings.tasks.model_copy(update={"workers": concurrency})
        settings = settings.model_copy(update={"tasks": tasks})
    asyncio.run(run_worker(settings))


async def run_worker(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Run tasks until `stop` is set, or, without one, until SIGTERM or SIGINT; then
    stop gracefully (a second signal skips the rest of the grace)."""
    from sleuth.gateway import Sleuth
    from sleuth.store import open_store
    from sleuth.tasks import TaskRunner

    hurry = asyncio.Event()
    if stop is None:
        stop = asyncio.Event()
        _on_signals(stop, hurry)
    async with AsyncExitStack() as stack:
        core = Sleuth(settings)
        stack.push_async_callback(core.aclose)
        await core.warm_up()
        # The tasks' call log goes with the worker's own log, to stderr (unless
        # `observe.log_to` says otherwise).
        core.observer.start(auto="stderr")
        stack.callback(core.observer.close)
        # As in `create_app`: a replayed run keeps breakers and cache in memory, but
        # its tasks are the configured store's, shared with the replicas.
        store = core.store if settings.replay is None else open_store(settings.store)
        if store is not core.store:
            stack.push_async_callback(store.aclose)
        runner = TaskRunner(core, store, settings.tasks)
        await runner.start()
        stack.push_async_callback(runner.stop)  # on an error below; a no-op after a stop
        where: str = settings.store.backend
        if where == "redis":
            where += f" (namespace {settings.store.namespace})"  # never the URL: a password
        log.info(
            "worker %s started: %d tasks at once, store %s",
            runner.worker_id,
            settings.tasks.workers,
            where,
        )
        await stop.wait()
        grace = settings.serve.shutdown_grace_s
        log.info("stopping: running tasks get %gs, the rest go back to the queue", grace)
        graceful = asyncio.create_task(runner.stop(grace))
        hurried = asyncio.create_task(hurry.wait())
        await asyncio.wait({graceful, hurried}, return_when=asyncio.FIRST_COMPLETED)
        hurried.cancel()
        if not graceful.done():
            # A second stop halts the running searches, which ends the first one's wait.
            await runner.stop(0.0)
        await graceful
        log.info("worker %s stopped", runner.worker_id)


def _on_signals(stop: asyncio.Event, hurry: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()

    def received(name: str) -> None:
        if not stop.is_set():
            log.info("%s received: stopping", name)
            stop.set()
        else:
            log.warning("%s received again: running tasks go back to the queue now", name)
            hurry.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, received, sig.name)


_T = TypeVar("_T")


def _on_store(settings: Settings, use: Callable[[Store], Awaitable[_T]]) -> _T:
    """`use(store)` on the configured store, opened for it and closed after."""
    from sleuth.store import open_store

    async def run() -> _T:
        store = open_store(settings.store)
        try:
            return await use(store)
        finally:
            await store.aclose()

    return asyncio.run(run())


@keys_app.command("create")
def create(
    tenant: Annotated[str, typer.Option("--tenant", help="Whose key: tasks are per tenant.")],
    name: Annotated[str, typer.Option("--name", help="A note to tell keys apart.")] = "",
    role: Annotated[
        KeyRoleName,
        typer.Option(
            "--role",
            help="tenant: its own tasks and figures; admin: an operator's key, which also "
            "sees every tenant's (dashboard, /metrics).",
        ),
    ] = KeyRoleName.tenant,
    config: ConfigOption = None,
) -> None:
    """Make a key and print it once; only its hash is stored."""
    from sleuth import keys
    from sleuth.errors import SearchError

    settings = _settings(config)

    try:
        key, _ = _on_store(
            settings,
            lambda store: keys.create_key(
                store, tenant, name=name, now=time.time(), role=role.value
            ),
        )
    except SearchError as exc:
        _err(exc.message)
        raise typer.Exit(2) from None
    print(key)  # noqa: T201 - the one time the key is shown; plain, for scripts
    Console(stderr=True).print(
        f"key for tenant {tenant!r} made; it is not shown again. Send it as "
        "'Authorization: Bearer <key>'.",
        highlight=False,
    )


@keys_app.command("list")
def list_keys(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's.")] = None,
    config: ConfigOption = None,
) -> None:
    """List keys by prefix (never the keys themselves)."""
    settings = _settings(config)
    table = Table("prefix", "tenant", "role", "name", "created", "revoked")
    for record in _on_store(settings, lambda store: store.list_keys(tenant)):
        created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(record.created_at))
        table.add_row(
            record.prefix, record.tenant, record.role, record.name, created, str(record.revoked)
        )
    Console(soft_wrap=True).print(table)


@keys_app.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix, as `keys list` shows it.")],
    config: ConfigOption = None,
) -> None:
    """Revoke a key: requests with it are refused from now on."""
    settings = _settings(config)
    revoked = _on_store(settings, lambda store: store.revoke_key(prefix))
    if not revoked:
        _err(f"no active key with prefix {prefix!r}")
        raise typer.Exit(2)
    Console(soft_wrap=True).print(f"revoked {revoked} key(s) with prefix {prefix}")


def _stop_with_parent() -> None:
    """Have Linux send this worker SIGTERM when the `sleuth serve` that started it dies,
    even by SIGKILL: an orphan would keep the port and run tasks nobody watches. (The
    graceful stop then puts its running tasks back in the queue.)"""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
