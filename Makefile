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
DOCS_ENV := .venvs/docs
RELEASE_ENV := .venvs/release
# make reproduce OUT=results: run into results/ (and regenerate the report) instead of a scratch folder.
OUT ?=
# make reproduce CONFIG=medium: the scale ladder's medium runs (the papers that have one) instead of quick.
CONFIG ?= quick
# make reproduce JOBS=1 OUT=results: one paper at a time, so each record's timing is an idle one (issue 28)
JOBS ?= 2
# The package whose release dry run make ci exercises (every step but the upload).
RELEASE_PACKAGE ?= sinkhorn-te
# The repository's address: [tool.icml26] in pyproject.toml, the one place that defines it (release links, docs).
REPO_URL ?= $(shell python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["icml26"]["repository"])')
CI_STAGES := lock lint check deps wheels release-check docs test

.PHONY: help uv setup test test-slow reproduce refresh bench report lint check deps lock wheels release-check docs ci device-check \
	$(addprefix ci-,$(CI_STAGES)) $(PACKAGES) $(addprefix test-,$(PACKAGES))

help:  ## this list
	@grep -hE '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'
	@echo "  <slug>             one paper: sync only it into .venvs/<slug>, run its quick config and verify it against results/"
	@echo "  test-<slug>        one paper's tests in that same environment"
	@echo "  papers: $(PACKAGES)"

uv:  ## install uv with pip when it is missing
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv

setup: uv  ## the workspace environment .venv with every package and optional extra (from uv.lock; ~7 GB)
	$(UV) sync --locked --all-packages --all-extras

test: uv  ## every member's tests, each in an environment synced from its own dependencies
	python3 tools/ci.py --jobs 2

test-slow: setup  ## the slow tests (@pytest.mark.slow), not run in CI
	.venv/bin/python -m pytest shared/tests tools/tests packages/*/tests -m slow -q

$(addprefix test-,$(PACKAGES)): test-%: uv
	python3 tools/ci.py $*

# LIMIT: seconds for the whole device check (OUT defaults to device-check/).
LIMIT ?= 3600
device-check: setup  ## on a CUDA machine: every paper's `paper` dry run on cuda, then every medium config (OUT, LIMIT)
	tools/device_check.sh --device cuda $(or $(strip $(OUT)),device-check) $(LIMIT)

# One paper needs only its own dependencies: the environment tools/ci.py tests it in (no `make setup`).
$(PACKAGES): %: uv
	UV_PROJECT_ENVIRONMENT=.venvs/$* $(UV) sync --locked --package icml26-$* --quiet
	.venvs/$*/bin/icml26 verify $* --config quick $(if $(strip $(OUT)),--out $(OUT))

reproduce: setup  ## run every paper's quick config (CONFIG=medium: medium) and verify it against results/ claim by claim (OUT=results: write there)
ifeq ($(strip $(OUT)),)
	$(ICML26) verify --all --config $(CONFIG) --jobs $(JOBS)
else
	@# the committed snapshot is the reference: copy it first, since the run may write over it
	rm -rf .venvs/reference && mkdir -p .venvs && cp -r results .venvs/reference
	@status=0; $(ICML26) verify --all --config $(CONFIG) --jobs $(JOBS) --out $(OUT) --reference .venvs/reference || status=$$?; \
	rm -rf .venvs/reference; \
	$(ICML26) report --out $(OUT) $(if $(filter results,$(OUT)),--readme README.md); exit $$status
endif

refresh: setup  ## rerun only the papers whose results/ are out of date (icml26 reproduce; CONFIG=medium too), then the report
	$(ICML26) reproduce --all --config $(CONFIG) --out results --jobs $(JOBS)
	$(MAKE) --no-print-directory report

# make bench PAPERS="atlas sinkhorn-te": only those papers' benchmarks (default: every packages/*/benchmarks).
PAPERS ?= $(PACKAGES)
bench: setup  ## every benchmark at full size into results/<slug>/bench.json, then the report (run it on an idle machine)
	@for script in $(wildcard $(foreach p,$(PAPERS),packages/$(p)/benchmarks/bench_*.py)); do \
	  echo "== $$script"; .venv/bin/python $$script --out results || exit 1; done
	$(MAKE) --no-print-directory report

report: setup  ## results/REPORT.md and the README catalogue's status column
	$(ICML26) report --out results --readme README.md

lint: uv  ## ruff check and format check
	UV_PROJECT_ENVIRONMENT=$(LINT_ENV) $(UV) sync --locked --only-group dev --quiet
	$(LINT_ENV)/bin/ruff check .
	$(LINT_ENV)/bin/ruff format --check .

check:  ## the house-shape check of every package (tools/check_package.py; CONTRIBUTING.md)
	python3 tools/check_package.py --all

deps: setup  ## deptry per package (two passes, from .venv: one env maps every import): missing, unused, transitive, misplaced
	python3 tools/deps.py

lock: uv  ## re-resolve uv.lock after a dependency change
	$(UV) lock

wheels: uv  ## build every wheel; install each beside the shared wheel in a clean venv (uv; pip for one); twine check
	python3 tools/check_wheels.py
	UV_PROJECT_ENVIRONMENT=$(RELEASE_ENV) $(UV) sync --locked --only-group release --quiet
	@$(RELEASE_ENV)/bin/twine check --strict dist/wheels/*.whl > .venvs/twine.log 2>&1 \
	  && echo "twine check --strict: $$(ls dist/wheels/*.whl | wc -l) wheels pass" || { cat .venvs/twine.log; exit 1; }

release-check: uv  ## the release workflow's steps for RELEASE_PACKAGE, all but the upload
	UV_PROJECT_ENVIRONMENT=$(RELEASE_ENV) $(UV) sync --locked --only-group release --quiet
	$(RELEASE_ENV)/bin/python tools/release.py --dry-run --package $(RELEASE_PACKAGE) --repo-url $(REPO_URL) \
	  --twine $(RELEASE_ENV)/bin/twine

docs: uv  ## the documentation site in build/site (mkdocs-material, strict, offline)
	UV_PROJECT_ENVIRONMENT=$(DOCS_ENV) $(UV) sync --locked --only-group docs --quiet
	$(DOCS_ENV)/bin/python tools/docs.py --out build/docs --repo-url $(REPO_URL)
	NO_MKDOCS_2_WARNING=true $(DOCS_ENV)/bin/mkdocs build --strict --quiet --config-file mkdocs.yml --site-dir build/site

ci-lock: uv
	$(UV) lock --check
ci-lint: lint
ci-check: check
ci-deps: deps
ci-wheels: wheels
ci-release-check: release-check
ci-docs: docs
ci-test: test

ci: uv  ## what .ci/run runs: lock, lint, house shape, deptry, wheels, release dry run, docs, tests (timed)
	@fail=0; times=""; \
	for stage in $(CI_STAGES); do \
	  echo "== $$stage"; t0=$$(date +%s); \
	  $(MAKE) --no-print-directory ci-$$stage || { fail=1; times="$$times $$stage FAILED"; }; \
	  times="$$times $$stage=$$(( $$(date +%s) - t0 ))s"; \
	done; \
	echo "ci stages:$$times"; \
	exit $$fail
