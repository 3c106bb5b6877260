# The two commands (see README):  `make run`  runs the main job,  `make test`  runs the tests.
# Both create the virtual environment on first use.  Override e.g. `make run PROFILE=smoke`.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= default
# torch is installed first and pinned, so nothing pulls a multi-GB CUDA build by accident on a CPU machine.
# On another platform set e.g. TORCH_SPEC="torch>=2.2,<=2.13.0".
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=
# test processes (pytest-xdist), each test file in one of them: tests/test_notebooks.py's session smoke run of every
# notebook (one core) and the tests that read it beside the other files; TEST_JOBS= runs everything in one process
TEST_JOBS ?= -n 2 --dist loadfile
# extra JupyterLab flags, e.g. `make lab LAB_ARGS="--no-browser --port 8890"`; as root, --allow-root is added
LAB_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root,)

.PHONY: run test install lint lab clean-runs timings gpu-check browser-check

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (helpers)" > /dev/null
	@touch $@

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
