# vtatune: every target works on a machine with only python3 and make.
#   make run              the main job (a 500-trial joint search)
#   make test             the test suite (installs the light default first)
#   make setup GP=1       also install torch for `--sampler gp` (~750 MB; gp tests skip without)
#   make lint             ruff and the type check (mypy: tools/typecheck.py)
#   make docs             the documentation site from docs/ into site/ (broken links fail)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
GP     ?=
comma  := ,
EXTRAS := dev$(if $(GP),$(comma)gp)
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# Wheels only where they exist (no source builds), no progress bars in logs.
PIP_FLAGS := --quiet --prefer-binary --progress-bar off

.PHONY: setup run test fuzz bench lint docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -e '.[$(EXTRAS)]'
	rm -f $(VENV)/.installed*
	touch $(STAMP)

run: setup
	$(VENV)/bin/vtatune search conv2d --trials 500

test: setup
	$(PY) -m pytest -n 2

# the hostile-input suite in full: every case of every file kind, 400 random command lines
fuzz: setup
	VTATUNE_FUZZ_DEEP=1 $(PY) -m pytest -n 2 tests/fuzz

bench: setup
	$(PY) -m vtatune.bench --write-readme

lint: setup
	$(VENV)/bin/ruff check vtatune tests tools
	$(PY) tools/typecheck.py

DOCS_STAMP := $(VENV)/.installed-docs-$(subst $(comma),-,$(EXTRAS))

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install $(PIP_FLAGS) -e '.[$(EXTRAS),docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) build dist site *.egg-info
