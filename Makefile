# trendagg: `make demo` runs the main job, `make test` the tests. Each creates
# .venv (Python 3.11+) and installs what it needs on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test ci check-wheel test-slow lint docs bench bench-quick bench-kernel bench-axes bench-varied bench-windows bench-edge bench-spark bench-stream bench-sharon bench-gloria bench-gloria-exec bench-before-after profile check-python clean

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "trendagg needs Python 3.11 or newer; set PYTHON=python3.11 (or newer)")'

$(STAMP): pyproject.toml | check-python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/trendagg demo

# pytest exits 5 when it collects no test: say so instead of failing silently. Two
# processes (pytest-xdist); the Spark tests share one of them (tests/conftest.py).
test: $(STAMP)
	@$(BIN)/python -m pytest -q -n 2 --dist loadgroup; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests were collected"; exit 0; fi; exit $$rc

# what CI runs (.ci/run): the tests, the documentation in strict mode, and the wheel
# installed into a fresh venv running --version, check and a small query (.ci/check-wheel)
ci: test docs check-wheel

check-wheel: $(STAMP)
	.ci/check-wheel

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

$(VENV)/.bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $(VENV)/.bench

bench: $(VENV)/.bench
	$(BIN)/python benchmarks/hamlet_rideshare.py

bench-quick: $(VENV)/.bench
	$(BIN)/python benchmarks/hamlet_rideshare.py --quick --repeats 1

# the compiled engine, whole process on one core: 1M-event sweep, 10M headline (~6 min)
bench-kernel: $(VENV)/.bench
	$(BIN)/python benchmarks/kernel_rideshare.py

# the compiled engine with one axis changed at a time: windows, partitions, GROUP-BY,
# predicates, times, NEXT and NOT (~6 min)
bench-axes: $(VENV)/.bench
	$(BIN)/python benchmarks/kernel_axes.py

# issue #15's varied workload (four window specs, thresholds per query, GROUP-BY
# T.district, ms times, 2,000 drivers; NOT and NEXT variants), 5M events (~17 min)
bench-varied: $(VENV)/.bench
	$(BIN)/python benchmarks/kernel_varied.py

# one day of windows sliding by a day down to a second: time and peak memory (~3 min)
bench-windows: $(VENV)/.bench
	$(BIN)/python benchmarks/kernel_windows.py

# where the kernel's time goes on the varied workload, by its inlined functions and
# lines (Linux perf and binutils; the first run compiles a debug build, ~10 min)
profile: $(VENV)/.bench
	$(BIN)/python benchmarks/profile_kernel.py varied

bench-edge: $(VENV)/.bench
	$(BIN)/python benchmarks/edge_index.py

# Spark batch vs the local engine and the transfer floor, whole commands:
# the 50-query workload at 1M and 10M events, the varied one at 1M (about 10 minutes here)
bench-spark: $(VENV)/.bench
	$(BIN)/python benchmarks/spark_batch.py --cluster

# Structured Streaming against batch in one started session, 1M events (about 3 minutes)
bench-stream: $(VENV)/.bench
	$(BIN)/python benchmarks/spark_stream.py

bench-sharon: $(VENV)/.bench
	$(BIN)/python benchmarks/sharon_sequences.py

# GLORIA's optimizer against NoPrune and Greedy: planning time and memory (about 1 minute)
bench-gloria: $(VENV)/.bench
	$(BIN)/python benchmarks/gloria_optimizer.py

# GLORIA's plan and the Greedy plan (Python reference executor) against GRETA and HAMLET,
# Python and compiled: mixed workloads 12 -> 120 queries on rideshare, S&P 500 and taxi,
# and Fig. 19's bursty simple and complex workloads (about 12 minutes; --quick: 1 minute)
bench-gloria-exec: $(VENV)/.bench
	$(BIN)/python benchmarks/gloria_execution.py

# the compiled engine of commit BASE against this tree on every kernel benchmark's workloads
# (uniform 1M and 10M, the axes, the varied workload, SHARON's and GLORIA's compiled sweeps),
# alternating fresh processes on one core, same rows checked (issue #40): BASE=REV
bench-before-after: $(VENV)/.bench
	@test -n "$(BASE)" || { echo "say which commit to compare with: make bench-before-after BASE=REV"; exit 2; }
	$(BIN)/python benchmarks/kernel_before_after.py --base $(BASE)

# the documentation site, offline, into site/; strict: a warning (a broken link, a docstring
# mkdocstrings cannot read) fails it. Part of `make ci`, not of `make test`.
$(VENV)/.docs: pyproject.toml | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	@touch $(VENV)/.docs

docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist site src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
