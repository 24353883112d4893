"""The image's figures: size, build time (cold, cached, after a code change), `docker run` to the
first 200, and throughput through the compose balancer with 1 and 3 replicas. Needs a Docker engine
(`python3.11 dev.py engine`).

    python3.11 bench/containers.py [--seconds 10] [--runs 2] [--only build,first_200,throughput]

Every container listens on 127.0.0.1 only and is removed on exit; results go to
bench/results/containers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import lib

sys.path.insert(0, str(lib.ROOT / "deploy"))
import engine  # dev.py's engine step, beside the manifests

IMAGE = "evalmock:latest"
BENCH_TAG = "evalmock:bench"
CONTEXT = (
    "pyproject.toml",
    "constraints.txt",
    "README.md",
    "Dockerfile",
    ".dockerignore",
    "src",
    "openapi",
    "fixtures",
    "schemas",
)
FIRST_200_RUNS = 5
CONNECTIONS = 32


def docker(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [engine.docker(), *args], capture_output=True, text=True, timeout=timeout, check=True
    )


def build_seconds(context: Path, *extra: str) -> float:
    started = time.monotonic()
    base = engine.BASE_IMAGE if engine.image_exists(engine.BASE_IMAGE) else None
    args = ["build", "--quiet", f"--tag={BENCH_TAG}", *extra, str(context)]
    if base:
        args.insert(1, f"--build-arg=BASE={base}")
    if ca := engine.ca_bundle():
        args.insert(1, f"--secret=id=pip_ca,src={ca}")
    subprocess.run(
        [engine.docker(), *args],
        env={**os.environ, "DOCKER_BUILDKIT": "1"},
        check=True,
        capture_output=True,
        timeout=1800,
    )
    return round(time.monotonic() - started, 1)


def build_times() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        context = Path(tmp)
        for name in CONTEXT:
            source = lib.ROOT / name
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, context / name)
        cold = build_seconds(context, "--no-cache")
        cached = build_seconds(context)
        with (context / "src" / "evalmock" / "__init__.py").open("a") as module:
            module.write("\n# a change to the code alone\n")
        code_change = build_seconds(context)
    return {"cold_s": cold, "cached_s": cached, "after_a_code_change_s": code_change}


def get_status(url: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {lib.TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0


def wait_for_200(url: str, started: float) -> float:
    while get_status(url) != 200:
        if time.monotonic() - started > 60:
            raise RuntimeError("no 200 within 60 s")
        time.sleep(0.02)
    return time.monotonic() - started


def first_200_seconds() -> float:
    """From `docker run` to the reference page's request answering 200."""
    port = lib.free_port()
    started = time.monotonic()
    container = docker(
        "run", "--detach", "--rm", "--publish", f"{lib.HOST}:{port}:8080", IMAGE
    ).stdout.strip()
    try:
        return wait_for_200(f"http://{lib.HOST}:{port}/v1{lib.EXAMPLE_TEST_SET_PATH}", started)
    finally:
        docker("rm", "--force", container)


def native_first_200_seconds(python: str) -> float:
    """The same without a container, `evalmock serve` from the project's environment: the machine's
    load now."""
    port = lib.free_port()
    started = time.monotonic()
    process = subprocess.Popen(
        [python, "-m", "evalmock", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return wait_for_200(f"http://{lib.HOST}:{port}/v1{lib.EXAMPLE_TEST_SET_PATH}", started)
    finally:
        process.terminate()
        process.wait(timeout=10)


def throughput(wrk: str, replicas: int, seconds: int, runs: int) -> dict[str, float]:
    port = lib.free_port()
    project = f"evalmock-bench-{os.getpid()}"
    lb_image = next(
        image
        for image in (os.environ.get("EVALMOCK_BALANCER_IMAGE"), engine.LB_IMAGE, "haproxy:2.6")
        if image and engine.image_exists(image)
    )
    store_image = next(
        image
        for image in (os.environ.get("EVALMOCK_STORE_IMAGE"), engine.REDIS_IMAGE, "redis:7.0")
        if image and engine.image_exists(image)
    )
    env = {
        **os.environ,
        "EVALMOCK_PORT": str(port),
        "EVALMOCK_BALANCER_IMAGE": lb_image,
        "EVALMOCK_STORE_IMAGE": store_image,
        "EVALMOCK_IMAGE": IMAGE,
    }
    compose = [
        *engine.compose(),
        "--project-name",
        project,
        "--file",
        str(lib.ROOT / "compose.yaml"),
    ]
    subprocess.run(
        [*compose, "up", "--detach", "--scale", f"evalmock={replicas}"],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    try:
        base = f"http://{lib.HOST}:{port}"
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while len(seen) < replicas:  # every replica up behind the balancer
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{replicas} replicas did not answer through the balancer within 60 s"
                )
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                    seen.add(response.headers["x-evalmock-replica"])
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        requests = lib.write_request_file(
            "containers", [(f"/v1{lib.EXAMPLE_TEST_SET_PATH}", lib.TOKEN)]
        )
        results = [lib.run_wrk(wrk, base, requests, CONNECTIONS, seconds) for _ in range(runs)]
        return lib.median_result(results)
    finally:
        subprocess.run(
            [*compose, "down", "--timeout", "5"], env=env, capture_output=True, timeout=300
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run (default 10)")
    parser.add_argument(
        "--runs", type=int, default=2, help="wrk runs per replica count (default 2)"
    )
    parser.add_argument(
        "--only",
        default="build,first_200,throughput",
        help="comma-separated sections (default all)",
    )
    args = parser.parse_args(argv)
    if not engine.engine_ready():
        print("no Docker engine answers: python3.11 dev.py engine sets one up", file=sys.stderr)
        return 1
    wrk = lib.ensure_wrk()
    if wrk is None:
        print("wrk is needed (apt-get install wrk)", file=sys.stderr)
        return 1
    engine.build_image()
    figures: dict[str, object] = {
        "image_mb": round(json.loads(docker("image", "inspect", IMAGE).stdout)[0]["Size"] / 1e6, 1)
    }
    if "build" in args.only:
        figures["build"] = build_times()
    if "first_200" in args.only:
        python = lib.evalmock_python(None)
        runs = [
            (first_200_seconds(), native_first_200_seconds(python)) for _ in range(FIRST_200_RUNS)
        ]
        figures["first_200_s"] = {
            "docker_run_median": round(statistics.median(container for container, _ in runs), 2),
            "native_serve_median": round(statistics.median(native for _, native in runs), 2),
            "runs_docker_native": [
                [round(container, 2), round(native, 2)] for container, native in runs
            ],
        }
    if "throughput" in args.only:
        figures["through_the_balancer"] = {
            f"{replicas}_replica{'s' if replicas > 1 else ''}": throughput(
                wrk, replicas, args.seconds, args.runs
            )
            for replicas in (1, 3)
        }
    figures["load_average"] = os.getloadavg()
    figures["machine"] = {"cores": os.cpu_count(), "note": "shared with other work while measured"}
    lib.RESULTS.mkdir(parents=True, exist_ok=True)
    (lib.RESULTS / "containers.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    if "build" in args.only:
        docker("image", "rm", BENCH_TAG)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
