# The evalmock image: every command (serve, contract, proxy, ...) in one image, running as a non-root user.
#   docker build -t evalmock .                          # where the official Python image can be pulled
#   python3.11 dev.py image                             # here: a base made from Debian packages (README)
# pip may need a CA bundle of its own; it comes in as a BuildKit secret and never lands in a layer:
#   DOCKER_BUILDKIT=1 docker build --secret id=pip_ca,src=/path/to/ca.pem -t evalmock .
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
WORKDIR /src
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# The runtime needs no pip: it is removed once evalmock is in (a smaller image, nothing to install with).
RUN python3 -m venv /opt/evalmock
# The dependencies first, pinned by constraints.txt: a change to the code alone rebuilds only the last layers.
COPY pyproject.toml constraints.txt ./
RUN --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
    && python3 -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > requirements.txt \
    && /opt/evalmock/bin/pip install -r requirements.txt -c constraints.txt
COPY README.md ./
COPY src ./src
COPY openapi ./openapi
COPY fixtures ./fixtures
COPY schemas ./schemas
RUN --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
    && /opt/evalmock/bin/pip install --no-deps . \
    && /opt/evalmock/bin/pip uninstall --yes --quiet pip setuptools
# What the runtime never reads, left out (about 40 MB): Faker's non-English locales (the world draws from en_US,
# whose providers import other English ones) and the debug symbols of the compiled extensions (binutils' strip,
# in this throw-away stage; where Debian's packages cannot be fetched the build says so and keeps them). strip's
# version decides nothing that ships, so it is not pinned.
# hadolint ignore=DL3008
RUN find /opt/evalmock/lib/python3*/site-packages/faker/providers -mindepth 2 -maxdepth 2 -type d \
        ! -name __pycache__ ! -name en ! -name 'en_*' -exec rm -rf {} + \
    && if (apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils) >/dev/null 2>&1; then \
        find /opt/evalmock -name '*.so' -exec strip --strip-unneeded {} +; \
    else echo "evalmock image: binutils not available, compiled extensions keep their debug symbols" >&2; fi
# The start cache of the default seed (word pools; the fixtures' verdict), made here so that every container's
# first start is as quick as a developer's second one. It is read-only at run time: another seed starts cold.
# Beside it, Hypothesis's Unicode tables, which `evalmock contract` would otherwise compute on every run (3 s).
RUN EVALMOCK_CACHE_DIR=/opt/evalmock/cache /opt/evalmock/bin/python -W ignore -c \
    "from evalmock.server.live_world import build_world; from evalmock.server.settings import ServerSettings; \
build_world(ServerSettings()); \
from evalmock.harness.run.schemathesis_schema import place_hypothesis_files; place_hypothesis_files(); \
from hypothesis import strategies as st; st.text(st.characters(codec='utf-8')).example()" \
    && chmod -R a+rX /opt/evalmock/cache

FROM ${BASE}
LABEL org.opencontainers.image.title="evalmock" \
      org.opencontainers.image.description="Mock server and contract-test harness for agent-evaluation test-case APIs" \
      org.opencontainers.image.licenses="MIT"
RUN useradd --system --uid 10001 --user-group --home-dir /work --create-home --shell /usr/sbin/nologin evalmock
COPY --from=build /opt/evalmock /opt/evalmock
ENV PATH=/opt/evalmock/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 EVALMOCK_CACHE_DIR=/opt/evalmock/cache
USER 10001:10001
# Mount data files, a targets file and a reports folder here.
WORKDIR /work
EXPOSE 8080
# No curl in the image: the image's own Python asks the running command (serve's /healthz, the proxy's port;
# evalmock/healthcheck.py).
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python3", "-m", "evalmock.healthcheck"]
ENTRYPOINT ["evalmock"]
# The targets file lets `docker run … contract --targets /work/targets.toml` audit this mock (share /work).
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--write-targets", "/work/targets.toml"]
