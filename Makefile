# vtatune: every target works on a machine with only python3 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup run test bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,gp]'
	touch $(STAMP)

run: setup
	$(VENV)/bin/vtatune search conv2d --trials 500

test: setup
	$(PY) -m pytest -n 2

bench: setup
	$(PY) -m vtatune.bench --write-readme

lint: setup
	$(VENV)/bin/ruff check vtatune tests

clean:
	rm -rf $(VENV) build *.egg-info
