# icml26: `make help` lists the targets. Every target works on a fresh machine with python3 and make.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
# Let Python cache bytecode: torch, jax and sklearn imports compile thousands of modules otherwise (~2 s a process).
unexport PYTHONDONTWRITEBYTECODE
CA_BUNDLE := /etc/ssl/certs/ca-certificates.crt
ifneq ($(wildcard $(CA_BUNDLE)),)
export SSL_CERT_FILE ?= $(CA_BUNDLE)
endif
ifneq ($(wildcard ../shared/data),)
export ICML26_DATA_MIRROR ?= $(abspath ../shared/data)
endif

PACKAGES := $(sort $(notdir $(patsubst %/pyproject.toml,%,$(wildcard packages/*/pyproject.toml))))
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
ICML26 := .venv/bin/icml26
LINT_ENV := .venvs/lint

.PHONY: help uv setup test test-slow reproduce report lint lock wheels ci $(PACKAGES) $(addprefix test-,$(PACKAGES))

help:  ## this list
	@grep -hE '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'
	@echo "  <slug>             run one paper's quick reproduction: $(PACKAGES)"
	@echo "  test-<slug>        one paper's tests in its own environment"

uv:  ## install uv with pip when it is missing
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv

setup: uv  ## the workspace environment .venv with every package and optional extra (from uv.lock)
	$(UV) sync --locked --all-packages --all-extras

test: uv  ## every member's tests, each in an environment synced from its own dependencies
	python3 tools/ci.py --jobs 2

test-slow: setup  ## the slow tests (@pytest.mark.slow), not run in CI
	.venv/bin/python -m pytest shared/tests tools/tests packages/*/tests -m slow -q

$(addprefix test-,$(PACKAGES)): test-%: uv
	python3 tools/ci.py $*

$(PACKAGES): %: setup
	$(ICML26) run $* --config quick --out results

reproduce: setup  ## every paper's quick reproduction (up-to-date ones skipped), then the report
	$(ICML26) reproduce --all --config quick --out results
	$(MAKE) --no-print-directory report

report: setup  ## results/REPORT.md and the README catalogue's status column
	$(ICML26) report --out results --readme README.md

lint: uv  ## ruff check and format check
	UV_PROJECT_ENVIRONMENT=$(LINT_ENV) $(UV) sync --locked --only-group dev --quiet
	$(LINT_ENV)/bin/ruff check .
	$(LINT_ENV)/bin/ruff format --check .

lock: uv  ## re-resolve uv.lock after a dependency change
	$(UV) lock

wheels: uv  ## build every wheel and install each with pip beside the shared wheel in a clean venv
	python3 tools/check_wheels.py

ci: uv  ## what .ci/run runs: lock check, lint, house shape, wheels, then the test matrix (last line: tests: N passed, M failed)
	@fail=0; \
	echo "== uv lock --check"; $(UV) lock --check || fail=1; \
	echo "== lint"; $(MAKE) --no-print-directory lint || fail=1; \
	if [ -f ../shared/tools/check_package.py ]; then \
	  echo "== check_package"; python3 ../shared/tools/check_package.py --all || fail=1; fi; \
	echo "== wheels"; $(MAKE) --no-print-directory wheels || fail=1; \
	echo "== tests"; $(MAKE) --no-print-directory test || fail=1; \
	exit $$fail
