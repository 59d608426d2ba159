# Thin wrappers over the acpgen CLI; settings live in [tool.acpgen] of pyproject.toml.
UV_VERSION := 0.13.9
# uv from PATH, else a private copy in .tools/uv (a venv: no root, and no pip install into a system
# Python that refuses it, PEP 668)
UV ?= $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/uv/bin/uv)
RUN := $(UV) run --frozen
ENSURE_UV := command -v "$(UV)" >/dev/null || { python3 -m venv .tools/uv && .tools/uv/bin/python -m pip install --quiet "uv==$(UV_VERSION)"; } \
	|| { echo "make: could not install uv $(UV_VERSION) into .tools/uv (python3 -m venv failed: on Debian install python3-venv); or put uv $(UV_VERSION) on PATH" >&2; exit 1; }
# For a target whose stdout is a report: show a command line on stderr, then run it
# ($(call report,COMMAND); the command holds no comma).
report = @printf '%s\n' '$(subst ','\'',$(1))' >&2 && $(1)
VERSION ?=
FROM ?=
TO ?=
FORMAT ?= text

.PHONY: help install generate check test schema lint typecheck layers diff bench

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' \
		'{ name[NR] = $$1; text[NR] = $$2; if (length($$1) > width) width = length($$1) } \
		END { for (i = 1; i <= NR; i++) printf "  %s  %s\n", sprintf("%-" width "s", name[i]), text[i] }'

install: ## install the pinned toolchain into .venv (uv sync --frozen, bytecode compiled; keeps the bench group if installed; the build backend too, for the install tests)
	@$(ENSURE_UV)
	$(UV) sync --frozen --inexact --quiet --compile-bytecode

generate: install ## regenerate generated/ (stable and unstable builds of protocol v1, and of the experimental draft v2) from schema/
	$(RUN) acpgen generate --both
	$(RUN) acpgen generate --protocol 2 --both

check: install lint typecheck layers ## fail if generated/ is stale, or on lint, type or layer errors (lint + typecheck + layers)
	$(RUN) acpgen generate --both --check
	$(RUN) acpgen generate --protocol 2 --both --check

lint: install ## ruff check and ruff format --check of the generator, tests, benchmarks, examples and deploy/
	$(RUN) ruff check generator tests bench examples deploy
	$(RUN) ruff format --check generator tests bench examples deploy

typecheck: install ## mypy --strict of the generator (the tests type-check the generated packages and examples)
	$(RUN) mypy

layers: install ## check the generator's layers: the import-linter contracts of [tool.importlinter] (docs/architecture.md)
	$(RUN) lint-imports --no-cache --no-logo

test: install interop-deps panel-deps browser-deps deploy-deps test-npm-cache test-wheelhouse floor-deps ## run the whole test suite (includes the stale-output check)
	$(RUN) acpgen generate --both --check
	$(RUN) acpgen generate --protocol 2 --both --check
	$(RUN) pytest -q -n 3 --maxschedchunk 2  # a third worker: many tests wait on processes and sockets

.PHONY: soak
soak: install ## stress trials at full size, not part of make test (docs/testing.md, "Soak runs"): a relay's agent killed mid-turn, 50 trials per profile
	ACP_RELAY_KILLED_TRIALS=50 $(RUN) pytest -q -s tests/runtime/test_relay_killed.py

.PHONY: test-fast goldens
FAST := not slow and not interop and not browser and not deploy and not panel
test-fast: install test-npm-cache ## the fast subset for a development loop (2 cores: 95 s quiet, nothing else running, for 2,146 tests; 2,253 tests took 2 min 8 s under load, at a load average of 5 to 10): generator, models, runtime; no slow, interop, browser, deploy or panel test
	$(RUN) pytest -q -n 2 --maxschedchunk 2 -m "$(FAST)"

goldens: install interop-deps ## rewrite every golden file of tests/golden (the golden tests, with --update-goldens) and list what changed; refuses while tests/golden has uncommitted changes
	$(RUN) python -m tests.support.goldens_update

.PHONY: interop-deps
interop-deps: ## install the pinned TypeScript SDK for the interop tests (npm ci, when missing or stale)
	@test tests/interop/node_modules/.package-lock.json -nt tests/interop/package-lock.json \
		|| npm ci --prefix tests/interop --no-audit --no-fund >&2

.PHONY: panel-deps
panel-deps: ## install the conformance panel's pinned npm peers, acpx and codex-acp (npm ci --prefix tests/panel, when missing or stale)
	@test tests/panel/node_modules/.package-lock.json -nt tests/panel/package-lock.json \
		|| npm ci --prefix tests/panel --no-audit --no-fund

.PHONY: floor-deps
floor-deps: install ## make the environments of the pydantic floor test: .venv-floor/<name> holds exactly tests/floor/<name>.txt (uv pip sync, hashed; when missing or stale)
	@for lock in tests/floor/pydantic-*.txt; do \
		env=.venv-floor/$$(basename $$lock .txt); \
		test $$env/.synced -nt $$lock || { \
			$(UV) venv --quiet --allow-existing --python .venv/bin/python $$env \
			&& $(UV) pip sync --quiet --require-hashes --python $$env/bin/python $$lock \
			&& touch $$env/.synced; } || exit 1; \
	done

.PHONY: deploy-deps
deploy-deps: ## what the deployment tests need: HAProxy (HAPROXY=/path, else haproxy on PATH or in /usr/sbin; Debian's haproxy installed only as root; else those tests are skipped)
	@python3 tests/support/find_haproxy.py --install

DEMO_PORT ?= 8080
.PHONY: deploy-demo
DEMO_APP = $(if $(METRICS),observed_agent:app,remote_agent:app)
deploy-demo: install deploy-deps ## the echo agent behind HAProxy with 2 uvicorn workers on 127.0.0.1:$(DEMO_PORT) (Ctrl-C drains and stops; files in .deploy-demo/); METRICS=1: each worker's OpenTelemetry metrics for Prometheus at http://127.0.0.1:(its port + 1000)/metrics
	@haproxy=$$(python3 tests/support/find_haproxy.py) || { echo "make deploy-demo: $$haproxy" >&2; exit 1; }; \
	$(RUN) python deploy/launch.py run --app $(DEMO_APP) --app-dir examples --workers 2 \
		--bind 127.0.0.1:$(DEMO_PORT) --run-dir .deploy-demo --drain-seconds 5 --haproxy "$$haproxy"

.PHONY: browser-deps
browser-deps: ## what the trace viewer's browser test needs: a browser (CHROMIUM=/path, else chromium or chrome on PATH; Debian's chromium installed only as root; else that test is skipped) and the pinned playwright-core (npm ci)
	@python3 tests/support/find_browser.py --install
	@test tests/browser/node_modules/.package-lock.json -nt tests/browser/package-lock.json \
		|| npm ci --prefix tests/browser --no-audit --no-fund

schema: install ## fetch and pin the schema: make schema VERSION=x.y.z
	$(RUN) acpgen schema fetch $(if $(VERSION),--version $(VERSION))

.PHONY: bump
bump: ## move the schema pin and all that follows it in one step: make bump VERSION=x.y.z (stdout: the diff report, Markdown)
	@test -n "$(VERSION)" || { echo "usage: make bump VERSION=x.y.z (a published version of the npm package)" >&2; exit 2; }
	@$(MAKE) --no-print-directory install >&2
	$(call report,$(RUN) acpgen schema bump --version $(VERSION))

.PHONY: test-npm-cache
test-npm-cache: install ## fill .test-artefacts/npm-cache with the npm packages the bump and README tests read offline
	$(RUN) python -m tests.support.npm_cache

.PHONY: test-wheelhouse
test-wheelhouse: install ## fill .test-artefacts/wheelhouse with the wheels of acpgen's locked dependencies (uv.lock, sha256 checked; when missing or stale), which the uvx test installs offline
	$(RUN) python -m tests.support.wheelhouse

diff: ## what changed between two spec revisions: make diff FROM=2.2.0 [TO=schema] [FORMAT=markdown] (stdout: the report)
	@test -n "$(FROM)" || { echo "usage: make diff FROM=<folder|file|REF:PATH|version> [TO=...] [FORMAT=text|markdown|json]" >&2; exit 2; }
	@$(MAKE) --no-print-directory install >&2
	$(call report,$(RUN) acpgen diff $(FROM) $(TO) --format $(FORMAT))

bench: interop-deps ## benchmarks against the official Python SDK, the TypeScript SDK's remote server and datamodel-code-generator (installs the bench group; stdout: the figures, also in bench/results.json)
	@$(ENSURE_UV) >&2
	$(call report,$(UV) sync --frozen --group bench --quiet --compile-bytecode >&2)
	$(call report,$(UV) run --frozen --group bench python -m bench.run)
	$(call report,$(UV) run --frozen --group bench python -m bench.diff_history)
