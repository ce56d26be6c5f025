# The two commands a new user needs: `make demo` and `make test`. Both install first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "perfcampaign needs Python >= 3.11 (found $$($(PYTHON) --version))" >&2; exit 1; }
	@command -v java >/dev/null || { echo "The demo service needs a JDK 17: apt-get install openjdk-17-jdk-headless" >&2; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/perfcampaign demo

test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider tests

bench: install
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) perfcampaign.duckdb perfcampaign-data
