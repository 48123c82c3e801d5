# Two commands do all the setup on a fresh machine (see README.md):
#   make demo   the live scaling show on the local stack (docs/demo.md); Ctrl-C stops it
#               (make demo DEMO_ARGS=--quick: no live view, ~2 minutes)
#   make test   install everything, run the gates and the whole test suite
#   make check  the inner loop: the gates and the tests that start no part of the stack
# Both are idempotent. The virtualenv is .venv; everything built or downloaded
# (Kafka jars, Kubernetes, etcd, helm) is cached in $(SEGUE_CACHE).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export SEGUE_CACHE ?= $(HOME)/.cache/segue
# Extra pytest arguments, e.g. make test PYTEST_ARGS="-m smoke"
PYTEST_ARGS ?=
# Extra `segue stack demo` arguments, e.g. make demo DEMO_ARGS=--quick
DEMO_ARGS ?=

.PHONY: demo test check coverage bench soak venv stack demo-stack lint typecheck contracts gates crds kstreams compiled agent

demo: venv demo-stack agent
	$(BIN)/segue stack demo $(DEMO_ARGS)

test: venv stack gates kstreams
	@status=0; $(BIN)/pytest $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then \
	  if [ -n "$(PYTEST_ARGS)" ]; then echo "make test: no test matched PYTEST_ARGS=$(PYTEST_ARGS)"; status=0; \
	  else echo "make test: pytest collected no tests; the suite is broken" >&2; fi; \
	fi; exit $$status

# The inner loop: the gates and every test that starts no part of the stack (no broker,
# no API server, no Spark, JVM or build: the marker `stack`, tests/conftest.py) and
# replays no fleet (`fleet`), two at a time (pytest-xdist). Minutes, not the suite's time.
check: venv gates
	$(BIN)/pytest -m "not stack and not fleet" -n 2 $(PYTEST_ARGS)

# The whole suite under coverage.py (branch coverage of segue, its subprocesses and the
# local stack's pods too; pyproject.toml's [tool.coverage]): the total is printed and the
# report kept in build/coverage/report.txt. Slower than make test, so not part of it.
coverage: venv stack gates kstreams
	rm -rf build/coverage && mkdir -p build/coverage
	@status=0; $(BIN)/coverage run -m pytest $(PYTEST_ARGS) || status=$$?; \
	$(BIN)/coverage combine --quiet; \
	$(BIN)/coverage report > build/coverage/report.txt; \
	echo "branch coverage of segue: $$($(BIN)/coverage report --format=total) % (build/coverage/report.txt)"; \
	exit $$status

# Benchmarks live here, not in tests: results and commands in docs/benchmarks.md.
bench: venv stack compiled
	bash bench/assignor/run.sh --budget 60 --java-timeout 420
	$(BIN)/python -m bench.worker.run_all
	$(BIN)/python -m bench.operator.scaling
	bash bench/kstreams/run.sh
	$(BIN)/python -m bench.autoscale.signal
	PYTHONPATH=$(COMPILED) $(BIN)/python -m bench.pipeline.run --scenarios 10000 --single 2000
	$(BIN)/python -m bench.pipeline.run --scenarios 500 --single 500

# Segue compiled with mypyc (setup.py: the decision core and the simulator) into
# $(COMPILED), beside the editable install, which stays interpreted: PYTHONPATH=$(COMPILED)
# imports it instead (docs/pipeline.md, "The compiled build"). mypyc type-checks against
# the runtime dependencies, so it builds in the venv (--no-build-isolation).
COMPILED := $(CURDIR)/build/compiled
compiled: $(COMPILED)/.built
# A build of the same compiled modules and of every module they import (tools/compiled.py
# inputs), setup.py and what it reads of pyproject.toml (tools/compiled.py key: the mypy
# pin, mypy's settings, the mapping) by the same Python is restored from $(SEGUE_CACHE)
# instead (tools/cached_build.py); the step names its paths relative to the clone, so a
# clone elsewhere finds the same key. Every other module is then copied over the build as
# it is now, so a change outside the decision core does not rebuild it.
COMPILED_SOURCES := src assignor operator pipeline protocol worker
$(COMPILED)/.built: $(VENV)/.installed setup.py tools/compiled.py $(shell find $(COMPILED_SOURCES) -name '*.py')
	$(BIN)/python tools/cached_build.py compiled \
	  --inputs setup.py tools/compiled.py $$($(BIN)/python tools/compiled.py inputs) \
	  --outputs build/compiled --key "$$($(BIN)/python -VV)" \
	  --key "$$($(BIN)/python tools/compiled.py key)" \
	  -- bash -c 'rm -rf build/compiled && SEGUE_MYPYC=1 $(BIN)/pip install --quiet \
	    --disable-pip-version-check --no-build-isolation --no-deps --target build/compiled .'
	$(BIN)/python tools/compiled.py overlay build/compiled
	touch $@

# Not in bench: half an hour of random scale events, pod kills and broker restarts.
soak: venv stack
	$(BIN)/python -m bench.soak.run $(SOAK_ARGS)

# The product (segue) and the dev-only local stack (stack/, segue-stack), both editable.
# Nothing is byte-compiled at install (--no-compile): a module is compiled on its first
# import, and most of what the dependencies ship (pyspark's whole tree) is never imported.
venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml stack/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip==25.3
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e '.[dev]' -e ./stack
	touch $@

# The stack's pinned parts into $(SEGUE_CACHE), then its commands (kubectl, helm, Kafka's
# kafka-*.sh) beside segue in $(BIN), so `. .venv/bin/activate` puts them all on the PATH.
stack: venv
	bash stack/install/all.sh
	bash stack/install/bin.sh $(BIN)
	$(BIN)/python -m segue.stack.cds

# What the demo and the README's commands after it run: Kafka, Kubernetes, etcd, helm and
# Kafka's tools. The tests' other parts (Prometheus, Toxiproxy, Spark's Kafka jars) are
# built by make stack, on the first make test.
DEMO_PARTS := kafka kube etcd helm kafka-tools
demo-stack: venv
	bash stack/install/all.sh $(DEMO_PARTS)
	bash stack/install/bin.sh $(BIN)
	$(BIN)/python -m segue.stack.cds

# The StreamApp CRD is generated from the pydantic models in segue.operator.api; the
# chart ships a byte-identical copy (tests/chart/test_crd_copy.py checks it).
crds: venv
	$(BIN)/python -m segue.operator.api.crd --write crds/streamapp.yaml
	cp crds/streamapp.yaml charts/segue/crds/streamapp.yaml

gates: lint typecheck contracts

# The Kafka Streams plugin (kstreams/, docs/kafka-streams.md): its JUnit tests, on the
# contract fixtures the Python side's tests parse too, and its jar, built against the oldest
# Kafka Streams it supports (3.8.1); then the same test classes again, not recompiled, on the
# newest (4.4.0, the pom's profile newest-kafka). Reports: kstreams/target/surefire-reports/kafka-*.
# Skipped, its jar and reports restored, when its sources, the contract fixtures, the JDK
# and Maven are those of a green run in $(SEGUE_CACHE) (tools/cached_build.py).
MVN := mvn -q -B -Dmaven.repo.local=$(SEGUE_CACHE)/m2 -f kstreams/pom.xml
kstreams: venv
	$(BIN)/python tools/cached_build.py kstreams \
	  --inputs kstreams/pom.xml kstreams/src tests/contracts/kstreams \
	  --outputs $(KSTREAMS_JAR) kstreams/target/surefire-reports \
	  --key "$$(java -version 2>&1)" --key "$$(mvn -v 2>&1 | head -1)" \
	  -- bash -c '$(MVN) verify && $(MVN) -P newest-kafka surefire:test'

# The plugin's jar alone (no JUnit runs; make kstreams builds it too), rebuilt when its sources
# change: the agent the local stack's pods copy (segue.stack.paths.KSTREAMS_JAR names it), so
# the chart installed as the README says runs Kafka Streams apps there (docs/local-stack.md).
KSTREAMS_JAR := kstreams/target/segue-kstreams-0.1.0.jar
agent: $(KSTREAMS_JAR)
$(KSTREAMS_JAR): kstreams/pom.xml $(shell find kstreams/src/main -type f)
	$(MVN) -DskipTests package
	touch $@

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/hadolint Dockerfile images/spark/Dockerfile

# mypy through the package-dir mapping (tools/typecheck.py says why). Its incremental cache
# lives in $(SEGUE_CACHE), so a fresh clone checks only what differs from the last check
# on the machine (mypy compares each file's hash when its mtime differs).
typecheck: venv
	$(BIN)/python tools/typecheck.py --cache-dir $(SEGUE_CACHE)/mypy

contracts: venv
	$(BIN)/lint-imports
