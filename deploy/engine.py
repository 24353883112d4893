"""`dev.py engine` and `dev.py image`: a Docker engine and base images made from Debian packages,
then the images compose.yaml runs.

Where no container registry can be reached, the engine comes from Debian's `docker.io` package,
`dockerd` is started by hand, and each base image is a Debian bookworm root filesystem made with
`debootstrap --variant=minbase` and `docker import`ed. Every step is skipped when its result is
already there (the root filesystems are kept as tarballs in ENGINE_CACHE, the images in Docker's own
store), so only the first run takes minutes. Standard library only: it runs before `.venv` exists.
"""

from __future__ import annotations

import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("EVALMOCK_ENGINE_CACHE", "/var/cache/evalmock-engine"))
DOCKERD_LOG = CACHE / "dockerd.log"
PACKAGES = ("docker.io", "docker-compose", "debootstrap")
SUITE = "bookworm"
# The images `docker import` makes: the app's base (python3 is 3.11), the load balancer's
# (Debian's HAProxy) and the session store's (Debian's Redis).
BASE_IMAGE = "evalmock-base:bookworm"
LB_IMAGE = "evalmock-haproxy:bookworm"
REDIS_IMAGE = "evalmock-redis:bookworm"
ROOTFS_PACKAGES = {
    BASE_IMAGE: "python3,python3-venv,ca-certificates",
    LB_IMAGE: "haproxy,ca-certificates",
    REDIS_IMAGE: "redis-server",
}
# compose.yaml's default balancer and session store: names of ours, so that `up` finds them here
# and pulls nothing.
BALANCER_IMAGE = "evalmock-balancer:latest"
STORE_IMAGE = "evalmock-store:latest"
# each image compose.yaml runs by default, and the imported one it is a tag of
LOCAL_TAGS = {BALANCER_IMAGE: LB_IMAGE, STORE_IMAGE: REDIS_IMAGE}
# What a root filesystem needs no more once its packages are in (the image is smaller without them).
ROOTFS_TRIM = (
    "var/lib/apt/lists",
    "var/cache/apt",
    "var/cache/debconf",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/log",
)
ENGINE_WAIT_SECONDS = 60
IMAGE_LABEL = "org.opencontainers.image.title=evalmock"  # set by the Dockerfile


class EngineError(Exception):
    """The engine or a base image could not be set up; the message says why."""


def docker() -> str:
    """Debian's client: it builds with BuildKit without the buildx plugin, which a newer client
    needs."""
    return (
        "/usr/bin/docker"
        if Path("/usr/bin/docker").exists()
        else (shutil.which("docker") or "docker")
    )


def compose() -> list[str]:
    """`docker-compose` (Debian's) where it is installed, else the client's `compose` plugin."""
    return [found] if (found := shutil.which("docker-compose")) else [docker(), "compose"]


def _run(*args: str, timeout: float = 900, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, text=True, timeout=timeout, capture_output=quiet, check=False)


def engine_ready() -> bool:
    try:
        return _run(docker(), "info", timeout=20, quiet=True).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _install_packages() -> None:
    missing = [
        name
        for name, tool in zip(PACKAGES, ("dockerd", "docker-compose", "debootstrap"), strict=True)
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    ]
    if not missing:
        return
    if os.geteuid() != 0:
        raise EngineError(
            f"these Debian packages are missing and only root can install them: {' '.join(missing)}"
        )
    print(f"installing {' '.join(missing)} ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *missing]):
        if subprocess.run(args, env=env, timeout=900, check=False).returncode != 0:
            raise EngineError(f"`{' '.join(args)}` failed")


def _start_dockerd() -> None:
    dockerd = shutil.which("dockerd", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if dockerd is None:
        raise EngineError("dockerd is not installed")
    if os.geteuid() != 0:
        raise EngineError("dockerd is not running and only root can start it")
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"starting dockerd (log: {DOCKERD_LOG}) ...", flush=True)
    with DOCKERD_LOG.open("ab") as log:
        # Its own session: it outlives this command, as a service would.
        subprocess.Popen(
            [dockerd], stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
        )
    deadline = time.monotonic() + ENGINE_WAIT_SECONDS
    while time.monotonic() < deadline:
        if engine_ready():
            return
        time.sleep(1)
    tail = DOCKERD_LOG.read_text(errors="replace").splitlines()[-5:]
    raise EngineError(
        f"dockerd did not answer within {ENGINE_WAIT_SECONDS} s; its log ends:\n" + "\n".join(tail)
    )


def _debian_mirror() -> str | None:
    """The mirror this host's apt uses, so that debootstrap fetches from where apt-get does."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        for stanza in sources.read_text().split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uris and suites and SUITE in suites.group(1).split():
                return uris.group(1)
    listing = Path("/etc/apt/sources.list")
    if listing.exists():
        for line in listing.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and parts[2] == SUITE:
                return parts[1]
    return None  # debootstrap's own default


def _rootfs_tarball(image: str) -> Path:
    tarball = CACHE / f"{image.replace(':', '-')}.tar"
    if tarball.exists():
        return tarball
    if os.geteuid() != 0:
        raise EngineError("debootstrap needs root")
    CACHE.mkdir(parents=True, exist_ok=True)
    print(
        f"making a Debian {SUITE} root filesystem for {image} (debootstrap, a few minutes) ...",
        flush=True,
    )
    with tempfile.TemporaryDirectory(dir=CACHE) as work:
        rootfs = Path(work) / "rootfs"
        mirror = _debian_mirror()
        args = [
            "debootstrap",
            "--variant=minbase",
            f"--include={ROOTFS_PACKAGES[image]}",
            SUITE,
            str(rootfs),
        ]
        if _run(*args, *([mirror] if mirror else []), timeout=1800).returncode != 0:
            raise EngineError(f"debootstrap failed for {image}")
        for part in ROOTFS_TRIM:
            shutil.rmtree(rootfs / part, ignore_errors=True)
            (rootfs / part).mkdir(parents=True, exist_ok=True)
        partial = tarball.with_suffix(".partial")
        if (
            _run("tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), ".").returncode
            != 0
        ):
            raise EngineError(f"could not pack the root filesystem of {image}")
        partial.rename(tarball)
    return tarball


def image_exists(image: str) -> bool:
    return _run(docker(), "image", "inspect", image, quiet=True).returncode == 0


def ensure_base_images() -> None:
    for image in ROOTFS_PACKAGES:
        if image_exists(image):
            continue
        tarball = _rootfs_tarball(image)
        print(f"importing {image} ...", flush=True)
        if (
            _run(
                docker(), "import", "--change", 'CMD ["bash"]', str(tarball), image, quiet=True
            ).returncode
            != 0
        ):
            raise EngineError(f"docker import failed for {image}")


def setup_engine() -> None:
    """Packages, a running dockerd and the base images, each only when missing."""
    if not engine_ready():
        _install_packages()
        _start_dockerd()
    ensure_base_images()


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def ca_bundle() -> str | None:
    """The CA bundle this host's pip trusts, handed to the build as a secret (it never lands in a
    layer)."""
    candidates = (
        os.environ.get("PIP_CERT"),
        os.environ.get("SSL_CERT_FILE"),
        ssl.get_default_verify_paths().cafile,
    )
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def build_image(base: str | None = None) -> list[str]:
    """Build the Dockerfile; the base is BASE_IMAGE where it exists (no registry needed), else the
    official one."""
    tags = [f"evalmock:{version()}", "evalmock:latest"]
    base = (
        base
        or os.environ.get("EVALMOCK_BASE")
        or (BASE_IMAGE if image_exists(BASE_IMAGE) else None)
    )
    args = [docker(), "build", *(f"--tag={tag}" for tag in tags), str(ROOT)]
    if base:
        args[2:2] = [f"--build-arg=BASE={base}"]
    if ca := ca_bundle():
        args[2:2] = [f"--secret=id=pip_ca,src={ca}"]
    print(" ".join(args), flush=True)
    result = subprocess.run(
        args, env={**os.environ, "DOCKER_BUILDKIT": "1"}, timeout=1800, check=False
    )
    if result.returncode != 0:
        raise EngineError("docker build failed")
    # The images this build replaced, untagged now: each rebuild would otherwise leave one behind.
    _run(docker(), "image", "prune", "--force", f"--filter=label={IMAGE_LABEL}", quiet=True)
    return tags


def tag_local_images() -> list[str]:
    """Tag each imported image under the name compose.yaml runs unless told another (LOCAL_TAGS):
    the balancer and the session store."""
    for tag, image in LOCAL_TAGS.items():
        if _run(docker(), "tag", image, tag, quiet=True).returncode != 0:
            raise EngineError(f"could not tag {image} as {tag}")
    return list(LOCAL_TAGS)


def main(argv: list[str]) -> int:
    try:
        if argv[0] == "engine":
            setup_engine()
            print(f"engine ready: {docker()} ({', '.join(ROOTFS_PACKAGES)} present)")
        else:
            setup_engine()
            print("built " + " and ".join(build_image()))
            tags = tag_local_images()
            print(
                " and ".join(f"tagged {LOCAL_TAGS[tag]} as {tag}" for tag in tags)
                + ": `docker compose up -d` pulls nothing"
            )
    except (EngineError, subprocess.TimeoutExpired, OSError) as error:
        print(f"dev.py {argv[0]}: {error}", file=sys.stderr)
        return 1
    return 0
