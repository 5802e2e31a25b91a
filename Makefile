# sfdf: two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint clean bench

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: install
	$(VENV)/bin/sfdf check examples/variance.toml
	$(VENV)/bin/sfdf simulate examples/variance.toml --computations 4096

test: install
	$(VENV)/bin/ruff check gen hdl cosim sw boards tests bench
	$(PY) -m pytest -q

bench: install
	$(PY) bench/analysis.py
	$(PY) bench/dummies.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
