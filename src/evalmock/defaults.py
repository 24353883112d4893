"""The defaults the command line shows and the commands apply: in a module that imports nothing, so
that building the command line (for `evalmock serve` too) never loads the harness and Schemathesis
with it, and the container's health check reads where a server listens without importing anything
else."""

DEFAULT_SEED = 42  # of the world, and of `--anonymize`'s made-up people
DEFAULT_CASES = 1000  # the world's generated cases per agent and project
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080  # evalmock serve
# where `evalmock serve` keeps sessions: in its own process (`--store redis://...` shares them)
DEFAULT_STORE = "memory"
# the form of the Redis URL `--store` takes besides it (rediss:// for TLS); read when the URL is
# checked (server/sessions/store_choice.py) and by the option's help
REDIS_STORE_FORM = "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]"
DEFAULT_PROXY_PORT = 8081  # evalmock proxy
DEFAULT_PROXY_TIMEOUT = 30.0  # seconds the proxy waits for the upstream's answer, and each piece
DEFAULT_PROXY_DEADLINE = 60.0  # seconds an answer to be judged may take in all
# whose side `evalmock proxy --judge` judges: the service's answers, the app's requests, or both
PROXY_JUDGES = ("both", "service", "client")
DEFAULT_PROXY_JUDGE = "both"
# A server listening on every interface is reached on this machine at the loopback address of its
# family.
LOOPBACK_OF = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}

DEFAULT_PROFILE = "pages"
LIVE_PROFILE = "digitalocean-live"
PROFILES = (DEFAULT_PROFILE, LIVE_PROFILE)

DEFAULT_MAX_EXAMPLES = 25  # examples per Schemathesis phase of an audit
DEFAULT_RETRIES = 3  # tries again per request, after its first answer
DEFAULT_MAX_WAIT = 30.0  # seconds: a longer Retry-After is not waited out
DEFAULT_BUDGET = 120.0  # seconds of waiting for the whole audit
DEFAULT_REQUEST_TIMEOUT = 15.0  # seconds an audit waits for an answer, the whole of it
# bytes of one answer's body the audit reads, on the wire and decoded
DEFAULT_MAX_ANSWER_BYTES = 16 * 2**20
MAX_SECONDS = 3600.0  # the longest timeout an option takes
MAX_COUNT = 1_000_000_000  # the most any count an option takes (cases, requests, examples, bytes)
MAX_SEED = 2**63 - 1  # the largest seed an option takes
MAX_WORKERS = 64  # the most workers (processes or threads) an option starts
MAX_RETRIES = 100  # the most tries again after a throttled answer

DEFAULT_MAX_WALKS = 10_000  # open walks a traffic audit follows at once
DEFAULT_MAX_PAGES = 50_000  # pages of those walks it holds
# the name of every audit worker thread begins so: Ctrl-C does not wait for them
AUDIT_THREADS = "evalmock-audit"
# `evalmock serve --churn N`: every this-many-th arrival in a list retires one of its active cases
CHURN_RETIRE_EVERY = 3
