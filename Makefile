# The two commands of the README's quick start: `make demo` and `make test`.
# Each creates .venv (Python >= 3.11) and installs the project with all its extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup kafka demo test test-fast lint bench clean e2e demo-kafka repeat soak

# Apache Kafka's jars from Maven Central into .kafka/ (see kafka/pom.xml); a no-op when present.
# Also the lag_aware_sticky plug-in jar, kafka/assignor/target/streams-assign-assignor-*.jar
# (docs/plugins.md); the tests rebuild it when a source is newer.
KAFKA_STAMP := .kafka/.fetched

$(KAFKA_STAMP): kafka/pom.xml kafka/lib-44/pom.xml kafka/assignor/pom.xml $(shell find kafka/assignor/src -name '*.java')
	bash scripts/ensure-java.sh
	bash scripts/ensure-maven.sh
	mvn -q -B -f kafka/pom.xml package
	mvn -q -B -f kafka/assignor/pom.xml package
	touch $(KAFKA_STAMP)

kafka: $(KAFKA_STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	bash scripts/ensure-java.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m lag.demo

test: $(STAMP) $(KAFKA_STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/python -m pytest

# The real-Kafka checks alone: broker helper tests and end-to-end scenarios A, B, C (docs/e2e.md).
e2e: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/python -m pytest tests/kafka tests/e2e

# The real-cluster path of the demo: broker + Streams app, prediction beside the real assignment.
demo-kafka: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/python -m devtools.kafka.demo_kafka --scenario A --scenario B --scenario C

# The edit loop: everything but Spark, Kafka's JVMs (broker and reference assignors) and the long
# solver runs, with hypothesis' "fast" profile (fewer examples, tests/tiers.py): under a minute.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not spark and not kafka and not slow" --hypothesis-profile=fast

# The folders lint reads.
LINT_DIRS := streams_assign lag devtools tests benchmarks examples scripts

# The flake hunt: every test that starts a JVM, a broker, Spark or client processes, RUNS times in a
# row, with each test's pass count (scripts/repeat_tests.py). Not part of make test.
RUNS ?= 20
repeat: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/python scripts/repeat_tests.py --runs $(RUNS)

# The soak run: hard rules after every rebalance over 100 000 random seeds per assignor, the long
# random differentials and the randomised e2e run (scripts/soak.py, docs/reliability.md).
# Not part of make test.
SCENARIOS ?= 100000
soak: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/python scripts/soak.py --scenarios $(SCENARIOS)

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_DIRS)
	$(BIN)/ruff format --check $(LINT_DIRS)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .kafka
