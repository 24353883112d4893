"""Benchmark plumbing: tools, pinned server processes, resident memory, wrk runs and request lists
(stdlib only)."""

from __future__ import annotations

import atexit
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TOOLS = BENCH / ".tools"
RESULTS = BENCH / "results"
WRK_SCRIPT = BENCH / "replay.lua"
HOST = "127.0.0.1"
SERVER_CPU = "0"
LOAD_CPU = "1"

# The page's own example request (agent `example`, the page's project, retired cases too, 25 a
# page).
EXAMPLE_QUERY = "projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25"
EXAMPLE_TEST_SET_PATH = "/agents/example/test-set/cases?" + EXAMPLE_QUERY
EXAMPLE_GRADIENT_PATH = "/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"
TOKEN = "demo-user"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- tools
# --------------------------------------------------------------------------------------------------


def ensure_wrk() -> str | None:
    """wrk from Debian's packages; None when it cannot be had (the caller falls back to a Python
    load generator)."""
    found = shutil.which("wrk")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt and os.geteuid() == 0:
        log("installing wrk (apt-get install wrk)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run([apt, "update", "-qq"], check=False, env=env, timeout=300)
        subprocess.run([apt, "install", "-y", "-qq", "wrk"], check=False, env=env, timeout=300)
    return shutil.which("wrk")


def ensure_prism() -> Path:
    """Stoplight Prism from npm, installed into bench/.tools (git-ignored)."""
    prism = TOOLS / "node_modules" / ".bin" / "prism"
    if not prism.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is needed to install Stoplight Prism (apt-get install npm)")
        log("installing @stoplight/prism-cli into bench/.tools")
        TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(TOOLS),
                "@stoplight/prism-cli",
            ],
            check=True,
            timeout=600,
            stdout=subprocess.DEVNULL,
        )
    return prism


def prism_version(prism: Path) -> str:
    return subprocess.run(
        [str(prism), "--version"], capture_output=True, text=True, timeout=60
    ).stdout.strip()


def evalmock_python(explicit: str | None) -> str:
    """The interpreter that runs evalmock: --python, else the project's .venv, else this one if it
    has evalmock."""
    if explicit:
        if shutil.which(explicit) is None:
            raise SystemExit(
                f"--python {explicit}: no such interpreter (give the path of a Python with "
                "evalmock)"
            )
        return explicit
    venv_python = ROOT / ".venv" / "bin" / "python"
    if venv_python.exists():
        return str(venv_python)
    probe = subprocess.run(
        [sys.executable, "-c", "import evalmock.server.runner"], capture_output=True
    )
    if probe.returncode == 0:
        return sys.executable
    log("no environment with evalmock found: creating .venv with dev.py")
    sys.path.insert(0, str(ROOT))
    import dev  # the project's own bootstrap

    dev.ensure_environment()
    return str(venv_python)


def compile_evalmock(python: str) -> bool:
    """Write the evalmock package's bytecode, as Python does on a start unless
    PYTHONDONTWRITEBYTECODE is set.

    Every start is then measured as a user's second start is: without compiling the package's
    modules again.
    """
    # dev.py's own step, run by the interpreter measured (its bytecode is what that interpreter
    # reads).
    code = (
        f"import pathlib, sys; sys.path.insert(0, {str(ROOT)!r}); import dev, evalmock; "
        "raise SystemExit(not dev.compile_package(pathlib.Path(evalmock.__file__).parent))"
    )
    compiled = subprocess.run([python, "-c", code], capture_output=True, timeout=120)
    return compiled.returncode == 0


# The interpreter's own words for its build, then its time for a fixed piece of plain Python (calls,
# dicts, strings, lists: what a request handler does). Two builds of one Python version differ by a
# fifth here (a build without profile-guided optimisation is the slower), and evalmock's figures
# move with it; Prism's do not.
_INTERPRETER = """
import sys, time
def work(n):
    total, seen = 0, {}
    for i in range(n):
        key = f"case-{i % 97}"
        seen[key] = seen.get(key, 0) + 1
        total += len([c for c in key if c != "-"])
    return total, len(seen)
best = float("inf")
for _ in range(7):
    started = time.perf_counter()
    work(20000)
    best = min(best, time.perf_counter() - started)
print(" ".join(sys.version.split()))
print(round(best * 1000, 2))
"""


def interpreter_facts(python: str) -> dict[str, str | float]:
    """The interpreter's version, its build in its own words, and the milliseconds _INTERPRETER's
    work takes."""
    lines = subprocess.run(
        [python, "-c", _INTERPRETER], capture_output=True, text=True, timeout=120
    ).stdout.splitlines()
    build, ms = [*lines, "", ""][:2]
    return {
        "python": build.split(" ")[0],
        "python_build": build,
        "python_calibration_ms": float(ms) if ms else -1.0,
    }


def machine_facts(python: str) -> dict[str, str | int | float]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "nproc": os.cpu_count() or 0,
        "cpu": cpu,
        "memory_gib": round(mem_kib / 2**20, 1),
        **interpreter_facts(python),
        "kernel": os.uname().release,
    }


# --- processes
# --------------------------------------------------------------------------------------------------

_RUNNING: list[subprocess.Popen[bytes]] = []


def _stop_all() -> None:
    for proc in list(_RUNNING):
        stop(proc)


atexit.register(_stop_all)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def spawn(
    command: Sequence[str], cpu: str | None, log_path: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a process in its own process group (so stop() ends its children too), optionally pinned
    to one CPU."""
    argv = (["taskset", "-c", cpu] if cpu is not None and shutil.which("taskset") else []) + list(
        command
    )
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115 (closed with the process)
    proc = subprocess.Popen(
        argv,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=ROOT,
    )
    _RUNNING.append(proc)
    return proc


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if proc in _RUNNING:
        _RUNNING.remove(proc)
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        pass


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def process_tree(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(tree.get(current, []))
    return found


def rss_mib(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MiB."""
    total_kib = 0
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
        except OSError:
            continue
    return round(total_kib / 1024, 1)


def tree_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process and all its descendants (every thread of each)."""
    total = 0.0
    for member in process_tree(pid):
        try:
            total += cpu_seconds(member)
        except OSError:
            continue
    return total


def tree_switches(pid: int) -> int:
    """Context switches so far (voluntary and not) of every thread of a process and its descendants:
    a server whose I/O runs on threads of its own (Granian) hands each request between two of them,
    and on one core each hand-off is a switch."""
    total = 0
    for member in process_tree(pid):
        for status in Path(f"/proc/{member}/task").glob("*/status"):
            try:
                lines = status.read_text().splitlines()
            except OSError:  # the thread ended
                continue
            total += sum(int(line.split()[1]) for line in lines if "ctxt_switches:" in line)
    return total


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of one process (not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get(url: str, token: str | None = TOKEN, timeout: float = 10.0) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}"} if token else {}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for_200(
    url: str, proc: subprocess.Popen[bytes], started: float, limit_s: float = 60.0
) -> float:
    """Poll every 5 ms until the URL answers 200; return seconds since `started` (a
    perf_counter)."""
    deadline = started + limit_s
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            status, _ = get(url, timeout=2.0)
            if status == 200:
                return time.perf_counter() - started
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.005)
    raise RuntimeError(f"no 200 from {url} within {limit_s} s")


@dataclass
class Server:
    """One running server under test: its label, process, base URL and the path prefix its APIs live
    under."""

    label: str
    proc: subprocess.Popen[bytes]
    port: int
    test_set_prefix: (
        str  # "/v1" for evalmock; Prism ignores a relative `servers` URL and serves from the root
    )
    gradient_prefix: str
    startup_s: float = 0.0
    rss_after_start_mib: float = 0.0
    notes: dict[str, object] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def example_url(self) -> str:
        return self.base + self.test_set_prefix + EXAMPLE_TEST_SET_PATH

    def rss(self) -> float:
        return rss_mib(self.proc.pid)


def start_evalmock(
    python: str,
    label: str = "evalmock",
    cases: int | None = None,
    workers: int | None = None,
    extra: Sequence[str] = (),
    cpu: str | None = SERVER_CPU,
    log_name: str | None = None,
) -> Server:
    port = free_port()
    command = [python, "-m", "evalmock", "serve", "--host", HOST, "--port", str(port)]
    if cases is not None:
        command += ["--cases", str(cases)]
    if workers is not None:
        command += ["--workers", str(workers)]
    command += list(extra)
    return _start(label, command, port, "/v1", "/v2", cpu, log_name, "/v1" + EXAMPLE_TEST_SET_PATH)


def start_bare_starlette(
    python: str,
    label: str = "bare-starlette",
    cpu: str | None = SERVER_CPU,
    server: str | None = None,
) -> Server:
    """bench/bare_starlette.py: fixed bytes on every path, served like evalmock (the Python
    ceiling)."""
    port = free_port()
    command = [python, str(BENCH / "bare_starlette.py"), "--host", HOST, "--port", str(port)]
    command += ["--server", server] if server else []
    return _start(label, command, port, "/v1", "/v2", cpu, None, "/v1" + EXAMPLE_TEST_SET_PATH)


def start_proxy(
    python: str,
    upstream: str,
    label: str = "proxy",
    extra: Sequence[str] = (),
    cpu: str | None = SERVER_CPU,
    log_name: str | None = None,
) -> Server:
    """`evalmock proxy` in front of `upstream`, answering the example request through it."""
    port = free_port()
    command = [
        python,
        "-m",
        "evalmock",
        "proxy",
        "--upstream",
        upstream,
        "--host",
        HOST,
        "--port",
        str(port),
        *extra,
    ]
    return _start(label, command, port, "/v1", "/v2", cpu, log_name, "/v1" + EXAMPLE_TEST_SET_PATH)


def start_prism(
    prism: Path,
    document: str,
    label: str,
    dynamic: bool = False,
    quiet: bool = True,
    cpu: str | None = SERVER_CPU,
    log_name: str | None = None,
) -> Server:
    port = free_port()
    command = [str(prism), "mock", "-h", HOST, "-p", str(port)]
    if dynamic:
        command.append("-d")
    if quiet:
        command += ["-v", "error"]
    command.append(str(ROOT / "openapi" / document))
    probe = EXAMPLE_GRADIENT_PATH if document.startswith("gradient") else EXAMPLE_TEST_SET_PATH
    # Prism serves a document whose only server URL is relative (`/v1`) from the root, without the
    # prefix.
    return _start(label, command, port, "", "", cpu, log_name, probe)


def _start(
    label: str,
    command: list[str],
    port: int,
    test_set_prefix: str,
    gradient_prefix: str,
    cpu: str | None,
    log_name: str | None,
    probe_path: str,
) -> Server:
    RESULTS.mkdir(parents=True, exist_ok=True)
    log_path = RESULTS / "logs" / f"{log_name or label}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    proc = spawn(command, cpu, log_path)
    server = Server(label, proc, port, test_set_prefix, gradient_prefix)
    server.startup_s = wait_for_200(server.base + probe_path, proc, started)
    server.rss_after_start_mib = server.rss()
    return server


# --- wrk
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadResult:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    errors: dict[str, int]
    bytes_per_response: float
    # CPU time the server's processes spent per answered request (user + system, every thread): what
    # a request costs the server, which other work on a shared machine disturbs far less than
    # throughput.
    cpu_us_per_request: float = 0.0
    # The share of the machine's CPU time its hypervisor gave other guests during the run (steal): a
    # virtual machine whose host is oversubscribed runs slower by about this much, on both sides of
    # a comparison but not evenly, round to round.
    steal_pct: float = 0.0
    # Context switches of the server's threads per answered request (see tree_switches).
    switches_per_request: float = 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def write_request_file(name: str, lines: Sequence[tuple[str, ...]]) -> Path:
    """A replay file for replay.lua: one `path TAB token [TAB prefer-header]` per line."""
    path = RESULTS / "requests" / f"{name}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(line) + "\n" for line in lines))
    return path


def cpu_ticks() -> tuple[int, int]:
    """(stolen, all) CPU ticks of the machine so far, from /proc/stat's first line; (0, 0) where
    there is none."""
    try:
        fields = [
            int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
        ]
    except (OSError, ValueError):
        return 0, 0
    # user nice system idle iowait irq softirq steal (guest time is counted in user already)
    return (fields[7] if len(fields) == 8 else 0), sum(fields)


def steal_pct(before: tuple[int, int], after: tuple[int, int]) -> float:
    stolen, total = after[0] - before[0], after[1] - before[1]
    return round(100 * stolen / total, 1) if total > 0 else 0.0


def run_wrk(
    wrk: str, base: str, request_file: Path, connections: int, seconds: int, threads: int = 1
) -> LoadResult:
    command = [
        "taskset",
        "-c",
        LOAD_CPU,
        wrk,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
        "-s",
        str(WRK_SCRIPT),
        base,
        "--",
        str(request_file),
    ]
    ticks = cpu_ticks()
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    stolen = steal_pct(ticks, cpu_ticks())
    for line in done.stdout.splitlines():
        if line.startswith("BENCHJSON "):
            data = json.loads(line.removeprefix("BENCHJSON "))
            break
    else:
        raise RuntimeError(f"wrk printed no summary: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    seconds_run = data["duration_us"] / 1e6
    latency = data["latency_us"]
    return LoadResult(
        requests=data["requests"],
        seconds=round(seconds_run, 2),
        rps=round(data["requests"] / seconds_run, 1),
        p50_ms=round(latency["p50"] / 1000, 2),
        p90_ms=round(latency["p90"] / 1000, 2),
        p99_ms=round(latency["p99"] / 1000, 2),
        errors=data["errors"],
        bytes_per_response=round(data["bytes"] / max(data["requests"], 1), 1),
        steal_pct=stolen,
    )


def median_result(results: Sequence[LoadResult]) -> dict[str, float]:
    return {
        "rps": round(statistics.median(r.rps for r in results), 1),
        "p50_ms": round(statistics.median(r.p50_ms for r in results), 2),
        "p99_ms": round(statistics.median(r.p99_ms for r in results), 2),
        "errors": sum(r.error_count for r in results),
        "bytes_per_response": round(statistics.median(r.bytes_per_response for r in results), 1),
        "cpu_us_per_request": round(statistics.median(r.cpu_us_per_request for r in results), 1),
        "steal_pct_max": max((r.steal_pct for r in results), default=0.0),
        "switches_per_request": round(
            statistics.median(r.switches_per_request for r in results), 2
        ),
    }


# --- request lists
# --------------------------------------------------------------------------------------------------


def read_targets(path: Path) -> dict[str, object]:
    return (
        tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    )


WALK_FILTERS: tuple[dict[str, str], ...] = (
    {},
    {"include": "retired"},
    {"kind": "hand"},
    {"kind": "correction"},
    {"include": "retired", "kind": "correction,hand"},
)
WALK_LIMITS = (10, 25, 50, 100)


def walk_test_set(
    server: Server,
    targets: dict[str, object],
    max_pages: int = 4,
    max_lines: int = 3000,
    filters: Sequence[dict[str, str]] = WALK_FILTERS,
    limits: Sequence[int] = WALK_LIMITS,
) -> list[tuple[str, str]]:
    """Real page walks (following each page's nextCursor, so every cursor is bound to its caller and
    filters) under several filters, limits and callers; returns (path without the API prefix, token)
    lines."""
    projects = [("example", "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0")]
    projects += [
        (p["agent_id"], p["project_id"]) for p in targets.get("test_set", {}).get("projects", [])
    ]
    tokens = ["demo-user", "demo-service", "demo-other"]
    lines: list[tuple[str, str]] = []
    combo = 0
    for agent, project in projects:
        for extra in filters:
            for limit in limits:
                combo += 1
                token = tokens[combo % len(tokens)]
                query = {"projectId": project, **extra, "limit": str(limit)}
                cursor = None
                for _ in range(max_pages):
                    params = dict(query, cursor=cursor) if cursor else query
                    encoded = urllib.parse.urlencode(params)
                    path = f"/agents/{urllib.parse.quote(agent)}/test-set/cases?{encoded}"
                    status, body = get(server.base + server.test_set_prefix + path, token)
                    if status != 200:
                        raise RuntimeError(f"walk got {status} for {path}: {body[:300]!r}")
                    lines.append((path, token))
                    cursor = json.loads(body).get("nextCursor")
                    if not cursor or len(lines) >= max_lines:
                        break
    random.Random(42).shuffle(lines)
    return lines


def gradient_lines(targets: dict[str, object]) -> list[tuple[str, str]]:
    lines = [(EXAMPLE_GRADIENT_PATH, TOKEN)]
    for case in targets.get("gradient", {}).get("test_cases", []):
        path = f"/gen-ai/evaluation_test_cases/{case['uuid']}"
        lines.append((path, TOKEN))
        lines.extend(
            (f"{path}?evaluation_test_case_version={v}", "demo-service")
            for v in case.get("versions", [])
        )
    random.Random(43).shuffle(lines)
    return lines


def prefixed(lines: Sequence[tuple[str, str]], prefix: str) -> list[tuple[str, str]]:
    return [(prefix + path, token) for path, token in lines]
