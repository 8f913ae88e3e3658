# fleet-assignor: newcomer entry points are `make setup` then `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON_BOOT ?= python3
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
JARS_DIR := jvm/jars

# pyspark 4.0 wants Java 17 (a newer JDK may also be installed: do not pick it up).
JAVA17 := /usr/lib/jvm/java-17-openjdk-amd64
ifneq ($(wildcard $(JAVA17)),)
export JAVA_HOME := $(JAVA17)
export PATH := $(JAVA17)/bin:$(PATH)
endif
export PYSPARK_PYTHON := $(PY)
export PYSPARK_DRIVER_PYTHON := $(PY)
export FLEET_ASSIGNOR_JARS := $(CURDIR)/$(JARS_DIR)

.PHONY: help setup venv jars oracle live follower lint typecheck test soak bench bench-kafka bench-live run demo-live cluster-demo dist-zip clean

help:
	@echo "make setup   - create .venv, install fleet-assignor[dev,local], fetch Delta jars, build the Kafka oracle, the live jars and the plan follower"
	@echo "make test    - ruff + pytest + the follower's JUnit, offline (the CI gate)"
	@echo "make run     - plan a synthetic fleet on local Delta tables and print the summary"
	@echo "make bench   - benchmarks, JSON under benchmarks/results/"
	@echo "make soak    - long runs (randomized, multi-broker, cluster, live follower)"
	@echo "make demo-live - local Kafka broker + Streams apps: collect, plan, summary, stop"
	@echo "make cluster-demo - Spark standalone master + 2 workers: spark-submit the job, summary, stop"

setup: venv jars oracle live follower

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,local]'
	touch $@

jars: $(JARS_DIR)/.fetched

$(JARS_DIR)/.fetched: jvm/pom.xml
	cd jvm && mvn -q -B dependency:copy-dependencies
	touch $@

oracle:
	if [ -f oracle/pom.xml ]; then cd oracle && mvn -q -B package; fi

# Live Kafka (issue 20): the collect helper, the demo Streams app and Kafka's broker jars -> live/target/.
live:
	cd live && mvn -q -B package

# The plan follower (issue 24): a KIP-924 TaskAssignor for Streams applications, Maven module follower/ ->
# follower/target/fleet-plan-follower-1.0.jar (coordinate fleet.assignor:fleet-plan-follower:1.0) and
# follower/target/lib/. Its JUnit tests read Delta tables written by the job itself (the fixtures, made once per
# change of the script); `make test` runs them again offline.
FOLLOWER_FIXTURES := follower/target/fixtures

follower: $(FOLLOWER_FIXTURES)/expected.json
	cd follower && mvn -q -B package

$(FOLLOWER_FIXTURES)/expected.json: follower/fixtures/make_fixtures.py $(VENV)/.installed $(JARS_DIR)/.fetched
	rm -rf $(FOLLOWER_FIXTURES)
	$(PY) follower/fixtures/make_fixtures.py $(FOLLOWER_FIXTURES)

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# mypy over the assignor core. mypy does not run the editable install's import hook, so it reads the
# package through a link named fleet_assignor (kept inside .venv, which every tool skips).
typecheck:
	mkdir -p $(VENV)/mypy-path && ln -sfn "$(CURDIR)" $(VENV)/mypy-path/fleet_assignor
	MYPYPATH=$(VENV)/mypy-path $(PY) -m mypy -p fleet_assignor.assignor

# Any one test (its fixtures included) longer than this fails with every thread's stack.
TEST_TIMEOUT_S ?= 900

# ruff first, then pytest even when ruff complained, then the follower's JUnit tests offline (all reported),
# failing if any failed.
test:
	@rc=0; $(PY) -m ruff check . || rc=1; \
	$(PY) -m ruff format --check . || rc=1; \
	$(MAKE) --no-print-directory typecheck || rc=1; \
	$(PY) -m pytest -q -m "not soak and not bench" --timeout=$(TEST_TIMEOUT_S) --durations=25 || rc=1; \
	(cd follower && mvn -q -B -o test) || rc=1; \
	exit $$rc

soak:
	$(PY) -m pytest -q -m soak

bench:
	mkdir -p benchmarks/results
	$(PY) -m benchmarks.bench_assignors
	$(PY) -m benchmarks.bench_rack
	$(PY) -m benchmarks.bench_fleet
	$(PY) -m benchmarks.bench_fleet --cold --sizes 100000 --kinds arrow
	$(PY) -m benchmarks.bench_rollout
	$(PY) -m benchmarks.bench_grouped

# Ours vs Kafka's own assignors in one run: benchmarks/results/kafka_ratios.json + the table in docs/performance.md.
bench-kafka:
	mkdir -p benchmarks/results
	$(PY) -m benchmarks.bench_kafka

# collect timed on a local broker with 100 applications x 10 members: benchmarks/results/bench_live.json.
bench-live:
	mkdir -p benchmarks/results
	$(PY) -m benchmarks.bench_live

# The package as spark-submit's --py-files wants it (laid out as in the wheel: fleet_assignor/...).
dist-zip:
	mkdir -p dist
	$(PY) -c "from fleet_assignor.jobs.standalone_spark import package_zip; print(package_zip('dist/fleet_assignor.zip'))"

run:
	$(PY) -m fleet_assignor.jobs.run_synthetic

# A local Kafka broker and two Streams apps: collect, plan, print the summary, stop all it started.
demo-live:
	$(PY) -m fleet_assignor.jobs.demo_live

# A Spark standalone master and two workers from pyspark's jars: spark-submit the job on a small synthetic
# fleet, print the summary, stop the master and workers it started.
cluster-demo:
	$(PY) -m fleet_assignor.jobs.demo_cluster

clean:
	rm -rf $(VENV) $(JARS_DIR) follower/target spark-warehouse metastore_db derby.log .pytest_cache
