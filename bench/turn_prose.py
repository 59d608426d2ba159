"""What the agent thinks and says during the realistic turn (``bench.turn_writer``).

Written for this benchmark: a coding agent asked to add retries to the HTTP client of a small
storage library, ``harbor``. The texts are streamed in small pieces, as models stream them.
"""

from __future__ import annotations

PROMPT = (
    "Uploads to the storage API give up on the first 503. Add retries with exponential backoff "
    "and jitter to harbor's HTTP transport (honour Retry-After, never retry a non-idempotent "
    "request unless it carries an idempotency key), and cover it with tests."
)

TITLE = "Retries with backoff for the harbor transport"

THOUGHTS = {
    "start": (
        "The user wants retries in the transport layer, not in the uploader, so every caller "
        "benefits. Before touching anything I need to know how requests are sent today: where "
        "the session lives, whether there is already some retry logic hidden in the upload "
        "path, and how errors are raised. A 503 with Retry-After should wait at least that "
        "long; without the header, exponential backoff with full jitter is the usual answer. "
        "The tricky part is idempotency: a PUT of a part is safe to repeat, a POST that creates "
        "a multipart upload is not, unless the request carries an idempotency key. I should "
        "also make sure that a retried request rewinds its body stream, otherwise the second "
        "attempt would send an empty body and the server would answer with a checksum error."
    ),
    "after-reading": (
        "So send_request in transport.py calls the pooled session once and maps the status to "
        "an exception right away. The uploader catches TransportError and gives up — which is "
        "exactly the reported behaviour. There is no clock abstraction, so tests would have to "
        "sleep for real; I will inject a sleep function and a random source so the tests are "
        "fast and deterministic. Retry-After can be a number of seconds or an HTTP date; both "
        "must be parsed, and a date in the past means retry at once. The retry budget should "
        "be bounded in attempts and in total time, and the last error must be raised unchanged "
        "so that callers keep their existing except clauses. A new module, retry.py, keeps "
        "the policy separate from the transport: a frozen dataclass with the attempts, the "
        "base and the cap, and a function that computes the delays."
    ),
    "after-failure": (
        "Two failures. The first is mine: the policy counts the first attempt as a retry, so "
        "with max_attempts=3 it only tries twice. The second is the body rewind: parts built "
        "from a bytes object are fine, but the streaming part wraps a generator that cannot be "
        "rewound. Such a request must not be retried at all; the transport should say so in "
        "the log and raise the first error."
    ),
    "second-failure": (
        "The attempt count is fixed. The rewind test still fails because the transport checks "
        "whether the body is seekable only after the first attempt, when the generator is "
        "already consumed. The check has to happen before the first send, and the decision "
        "must be logged once per request, not once per attempt."
    ),
    "before-summary": (
        "Everything passes, including the type check. I should summarise what changed, point "
        "out the behaviour change for streaming bodies, and mention the defaults so the user "
        "can tune them. The CLI is the one place where a minute of retrying could surprise "
        "someone, so it is worth a sentence; I will not change it without asking."
    ),
}

MESSAGES = {
    "start": "I'll start by reading the transport and the upload path to see how requests are sent and retried today.",
    "plan": (
        "The transport sends every request exactly once and turns any 5xx into a TransportError; "
        "the uploader gives up on the first one. I'll add a small retry policy module, use it in "
        "`send_request`, and make the uploader rely on it instead of its own error handling."
    ),
    "tests": "Now the tests: a fake session that answers from a script, an injected sleep and a seeded random source.",
    "failure": (
        "Two tests fail: the policy tried one time too few, and a streaming part cannot be "
        "rewound for a second attempt. Fixing both: attempts now count the first try, and "
        "requests whose body cannot be rewound are sent once and never retried."
    ),
    "second-failure": (
        "One test left: the transport decided whether a body can be rewound only after the first "
        "attempt had consumed it. The check now happens before the first send."
    ),
    "summary": (
        "Retries are in place. Here is what changed.\n\n"
        "**New: `src/harbor/retry.py`**\n"
        "- `RetryPolicy` (frozen dataclass): `max_attempts=5`, `base_delay=0.25`, `max_delay=20.0`, "
        "`retry_statuses={429, 500, 502, 503, 504}` and a total budget of 60 seconds.\n"
        "- `delays(policy, rng)` yields full-jitter exponential delays: a random wait between zero "
        "and `min(max_delay, base_delay * 2**attempt)`.\n"
        "- `retry_after(headers, now)` reads `Retry-After` as seconds or as an HTTP date; a date in "
        "the past means no wait, and a value above `max_delay` is capped.\n\n"
        "**Changed: `src/harbor/transport.py`**\n"
        "- `send_request` now retries connection errors and the retryable statuses, waiting for "
        "`Retry-After` when the server sends it and for the jittered backoff otherwise.\n"
        "- A request is retried only when it is idempotent (GET, HEAD, PUT, DELETE) or carries an "
        "`Idempotency-Key` header, and only when its body can be rewound. Streaming bodies are sent "
        "once; the log says why.\n"
        "- The last error is raised unchanged, so existing `except TransportError` clauses keep "
        "working. Each attempt is logged at debug level with the status and the wait.\n"
        "- `sleep` and `rng` can be injected through `Transport(...)` for tests.\n\n"
        "**Changed: `src/harbor/upload.py`**\n"
        "- The uploader no longer catches `TransportError` around each part; it relies on the "
        "transport's retries and only aborts the multipart upload when they are exhausted.\n\n"
        "**Tests: `tests/test_retry.py`** (18 new tests)\n"
        "- backoff bounds and jitter with a seeded random source, `Retry-After` in both forms, "
        "the attempt and time budgets, non-idempotent requests with and without a key, a "
        "streaming body that must not be retried, and an upload that survives two 503s.\n\n"
        "The whole suite passes (`uv run pytest`: 212 passed), and `ruff check` and `mypy --strict` "
        "are clean.\n\n"
        "One behaviour change to be aware of: a request that used to fail at once on a 503 can now "
        "take up to a minute before it fails. If the CLI should stay snappy, pass "
        "`RetryPolicy(max_attempts=1)` there, or lower the budget. I have not changed the CLI.\n\n"
        "Would you like me to add the retry counts to the upload progress output as well?"
    ),
}

COMMANDS = (
    ("init", "Initialize a new AGENTS.md file with codebase documentation", None),
    ("review", "Review a pull request", "PR number or URL"),
    ("compact", "Clear the conversation history but keep a summary in context", "optional instructions"),
    ("cost", "Show the total cost and duration of the current session", None),
    ("memory", "Edit the project memory file", None),
    ("pr-comments", "Get comments from a GitHub pull request", "PR number"),
    ("security-review", "Complete a security review of the pending changes on the current branch", None),
)

PLAN = (
    ("Read the transport, the uploader and their tests", "high"),
    ("Add a retry policy module with backoff, jitter and Retry-After", "high"),
    ("Retry idempotent requests in send_request", "high"),
    ("Let the uploader rely on the transport's retries", "medium"),
    ("Write tests for the policy and the transport", "high"),
    ("Run the test suite, ruff and mypy", "medium"),
)
