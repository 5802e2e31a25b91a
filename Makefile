# sfdf: two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# test workers (pytest-xdist): CI has two cores; a third worker fills the time the others spend waiting
# on Spark's JVM, simulated boards on ptys and subprocesses
JOBS   ?= 3
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint clean bench cluster

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@pkgs="$$($(PY) -m sfdf.hdl.toolchain --missing-packages)"; if [ -n "$$pkgs" ]; then \
	  (apt-get update -qq && apt-get install -y -qq $$pkgs) || echo "cosim: FST waves need $$pkgs; falling back to VCD"; fi
	touch $(STAMP)

demo: install
	@echo "== the variance network of 000 Fig. 1: deadlock analysis =="
	$(VENV)/bin/sfdf check examples/variance.toml
	@echo "== input: the 1,797 UCI digits (8x8) and 1,000 VERITAS-like 32x32 sparse frames =="
	$(PY) -m sfdf.sw.datasets digits build/demo/digits
	$(PY) -m sfdf.sw.datasets veritas build/demo/veritas --frames 1000
	@echo "== the main job: Spark streams every frame through the simulated device and checks it =="
	$(VENV)/bin/sfdf spark --input build/demo/digits --output build/demo/out-digits
	$(VENV)/bin/sfdf spark --input build/demo/veritas --output build/demo/out-veritas
	@echo "== 000 Fig. 3 without heartbeats: the analysis refuses it, the model deadlocks =="
	$(VENV)/bin/sfdf check examples/fig3_deadlock.toml || echo "(exit $$?: unsafe, as expected)"
	$(VENV)/bin/sfdf simulate examples/fig3_deadlock.toml --computations 2000 || echo "(exit $$?: deadlocked, as expected)"

test: install
	$(VENV)/bin/ruff check gen hdl cosim sw boards sfdf tests bench
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m pytest -q -n $(JOBS)

bench: install
	$(PY) bench/analysis.py
	$(PY) bench/dummies.py
	$(PY) bench/throughput.py
	$(PY) bench/host.py
	$(PY) bench/cluster.py
	$(PY) bench/channels.py
	$(PY) bench/hop.py
	$(PY) bench/sdep.py
	$(PY) bench/stm.py
	$(PY) bench/cosim.py
	$(PY) bench/fpga.py
	$(PY) bench/formal.py

# a Spark standalone cluster on this machine: the job on it against local[2], and a worker killed mid-job
cluster: install
	$(PY) bench/cluster.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
