# The two commands (see README):  `make run`  runs the main job,  `make test`  runs the tests.
# Both create the virtual environment on first use.  Override e.g. `make run PROFILE=smoke`.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= default
# The environment is a lock: requirements-<system>-<machine>.lock (uname -s, uname -m, lower case; made by `make
# lock` with uv from pyproject.toml) names the exact version of every package, direct and transitive.  torch is
# installed first from TORCH_SPEC, so that a CPU machine never pulls a multi-GB CUDA build by accident; the Linux
# lock holds PyTorch's CPU build (2.13.0+cpu), found where pip is configured to look for it, or with
# TORCH_SPEC="torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu".  `make install-latest` installs
# the newest versions pyproject admits instead, into .venv-latest (for checking drift; never the published runs).
TORCH_SPEC ?= torch==2.13.0
SYSTEM := $(shell uname -s | tr A-Z a-z)-$(shell uname -m)
LOCK ?= requirements-$(SYSTEM).lock
# `make lock` resolves both supported platforms with this uv (macOS 14 or newer: torch 2.13.0's Mac wheels need it);
# TORCH_CPU_SOURCE says where the CPU build of torch is
UV_VERSION ?= 0.13.9
TORCH_CPU_SOURCE ?= --extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match
PYTEST_ARGS ?=
# test processes (pytest-xdist), each test file in one of them: tests/test_notebooks.py's session smoke run of every
# notebook (one core) and the tests that read it beside the other files; TEST_JOBS= runs everything in one process
TEST_JOBS ?= -n 2 --dist loadfile
# extra JupyterLab flags, e.g. `make lab LAB_ARGS="--no-browser --port 8890"`; as root, --allow-root is added
LAB_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root,)

.PHONY: run test install install-latest lock lint lab clean-runs timings gpu-check browser-check

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(wildcard $(LOCK))
	@test -f $(LOCK) || { echo "no lock $(LOCK) for $(SYSTEM): make install-latest, or LOCK=FILE"; exit 2; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $(TORCH_SPEC)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (helpers)" > /dev/null
	@touch $@

# the newest versions pyproject admits (known-bad ones excluded there), beside the locked .venv
install-latest:
	@test -x .venv-latest/bin/python || $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --disable-pip-version-check $(TORCH_SPEC)
	.venv-latest/bin/python -m pip install --quiet --disable-pip-version-check --upgrade --upgrade-strategy eager -e ".[dev]"
	@echo "test it with: make test VENV=.venv-latest   (the venv's .installed marker is not written)"

# re-resolve the locks from pyproject.toml (review the diff; a moved version can move trained numbers)
lock:
	@test -x .venv-lock/bin/uv || { $(PYTHON) -m venv .venv-lock && .venv-lock/bin/pip install --quiet "uv==$(UV_VERSION)"; }
	echo "torch==2.13.0+cpu" > .torch-cpu-constraint.txt
	.venv-lock/bin/uv pip compile pyproject.toml --extra dev --python-version 3.11 --quiet \
		--python-platform x86_64-unknown-linux-gnu -c .torch-cpu-constraint.txt $(TORCH_CPU_SOURCE) \
		--custom-compile-command "make lock" -o requirements-linux-x86_64.lock
	MACOSX_DEPLOYMENT_TARGET=14.0 .venv-lock/bin/uv pip compile pyproject.toml --extra dev --python-version 3.11 --quiet \
		--python-platform aarch64-apple-darwin --custom-compile-command "make lock" -o requirements-darwin-arm64.lock
	rm .torch-cpu-constraint.txt

run: install
	$(PY) -m helpers run --profile $(PROFILE)

test: install
	@start=$$(date +%s); $(PY) -m pytest $(TEST_JOBS) $(PYTEST_ARGS); rc=$$?; \
	$(PY) -c 'import sys; from helpers.publish.times import note_test_time; note_test_time(*sys.argv[1:])' \
		$$(( $$(date +%s) - start )) $$rc; exit $$rc

lint: install
	$(VENV)/bin/ruff check helpers tests scripts notebooks

lab: install
	$(VENV)/bin/jupyter lab notebooks/ $(ROOT_FLAG) $(LAB_ARGS)

timings: install
	$(PY) scripts/estimators.py
	$(PY) scripts/attribution.py

# On a GPU machine: every notebook's smoke profile, then one full-size unit each, on CUDA (<= 8 min), and a dated
# record under docs/reproductions/gpu/. Without CUDA it says so and exits 0. Uses the venv if there is one (a device
# image brings its own PyTorch; see scripts/gpu_check.py for the packages to carry).
gpu-check:
	$(if $(wildcard $(PY)),$(PY),$(PYTHON)) scripts/gpu_check.py

# Every published notebook opened in JupyterLab in a headless Chromium (needs `pip install playwright` and a
# Chromium; a system one with CHROMIUM=/usr/bin/chromium): no error dialog, every figure shown, no error output.
browser-check: install
	$(PY) scripts/published_notebooks_browser.py $(if $(CHROMIUM),--chromium $(CHROMIUM))

clean-runs:
	rm -rf runs/
