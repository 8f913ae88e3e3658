"""Ours against Kafka's own assignors, measured in the same run (`make bench-kafka`; issue 9 item 4).

Shapes: the scale shapes of the HA/sticky issue (one stateful subtopology, 1 thread per client and 1 standby
unless stated; first assignment and a second one fed with the first), run with `high_availability`, `sticky`
and the broker-side `streams_sticky` (Kafka's side from kafka-group-coordinator, its own release: the JSON's
`kafka_coordinator_version`), and the rack shapes of the rack issue
(min_traffic and balance_subtopology, 3 racks, replicas on 1 or 2 of them). For each shape: our first call and
median of warm calls (the assignor's `assign`, or the optimizer, on an already loaded state), the median of
our whole one-application plan (`planner.plan`: assign, validation, distribution over threads, metrics, the
result; assignors only), Kafka's first call and warm median (in the oracle JVM, tests/kafka_oracle.py), and
the ratios ours / Kafka (assign alone, and whole plan, against Kafka's assign).

Warm means steady state on both sides: after the first call, untimed calls run (up to `--warmup`, stopped
once they took `--warmup-s`) before the timed ones. Kafka's JIT needs them: a JVM's first few calls run
interpreted or half-compiled code, and without them its "warm" median of 5 calls read 1.5-4x its steady
state on the `streams_sticky` shapes (2026-11-27). Ours gets the same untimed calls.

Writes `benchmarks/results/kafka_ratios.json` and regenerates the table between the `kafka-ratios` markers
in docs/performance.md. Kafka's rack solver (cycle cancelling) takes minutes at 1,000 x 50 (2,320 s
measured here on a loaded machine) and far longer at 10,000 x 200, so by default it runs on the 200 x 20
rack shapes only (`--kafka-rack-max-tasks 1000` adds one variant per strategy at 1,000 x 50, first call
only). `--part streams` measures `streams_sticky` alone and replaces only its rows in the JSON and the table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

from tests.kafka_oracle import KafkaOracle  # noqa: E402

RESULTS = REPO_ROOT / "benchmarks" / "results" / "kafka_ratios.json"
README = REPO_ROOT / "docs" / "performance.md"  # holds the ratios table
TABLE_START = "<!-- kafka-ratios:start -->"
TABLE_END = "<!-- kafka-ratios:end -->"
RACKS = ("rack-0", "rack-1", "rack-2")
SCALE_ASSIGNORS = ("high_availability", "sticky", "streams_sticky")
STREAMS = "streams_sticky"


@dataclass
class Measurement:
    shape: str
    kind: str  # the assignor or optimizer measured
    tasks: int
    clients: int
    ours_first_ms: float | None = None
    ours_median_ms: float | None = None
    kafka_first_ms: float | None = None
    kafka_warm_median_ms: float | None = None
    ratio_warm: float | None = None  # ours median / Kafka warm median
    ratio_first: float | None = None  # ours first / Kafka first
    # The whole one-application plan (assign, validation, distribution over threads, metrics, the result),
    # as the CLI and the job run it, against Kafka's assign alone.
    ours_plan_median_ms: float | None = None
    ratio_plan_warm: float | None = None  # ours whole plan median / Kafka warm median
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# --- shapes -------------------------------------------------------------------------------------------


def _uuid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012x}"


def _task(sub: int, partition: int, stateful: bool, racks: list[str] | None = None) -> dict[str, Any]:
    parts = [{"topic": f"src-{sub}", "partition": partition, "source": True, "changelog": False,
              "racks": racks or []}]  # fmt: skip
    if stateful:
        parts.append({"topic": f"store-{sub}-changelog", "partition": partition, "source": False,
                      "changelog": True, "racks": racks or []})  # fmt: skip
    return {"id": f"{sub}_{partition}", "stateful": stateful, "stores": [f"store-{sub}"] if stateful else [],
            "partitions": parts}  # fmt: skip


def _configs(standbys: int, **more: Any) -> dict[str, Any]:
    configs = {"acceptable_recovery_lag": 10_000, "max_warmup_replicas": 2, "num_standby_replicas": standbys,
               "probing_rebalance_interval_ms": 600_000}  # fmt: skip
    configs.update(more)
    return configs


def scale_scenario(tasks: int, clients: int, threads: int = 1, standbys: int = 1) -> dict[str, Any]:
    """Kafka's scale-test shape: one stateful subtopology, no history."""
    return {
        "app_id": f"scale-{tasks}x{clients}",
        "configs": _configs(standbys),
        "tasks": [_task(0, p, True) for p in range(tasks)],
        "clients": [{"process_id": _uuid(i + 1), "threads": threads} for i in range(clients)],
    }


def mixed_scenario() -> dict[str, Any]:
    """2,000 tasks in 10 subtopologies (half stateful) x 100 clients x 2 threads, with history and lags."""
    tasks = [_task(sub, p, sub % 2 == 0) for sub in range(10) for p in range(200)]
    clients = []
    for i in range(100):
        owned = [t["id"] for j, t in enumerate(tasks) if j % 100 == i]
        standby = [t["id"] for j, t in enumerate(tasks) if j % 100 == (i + 1) % 100 and t["stateful"]]
        lags = {t: -2 for t in owned if int(t.split("_")[0]) % 2 == 0}
        lags.update({t: 50 + (i * 7919 + k) % 20_000 for k, t in enumerate(standby)})
        clients.append({"process_id": _uuid(i + 1), "threads": 2, "prev_active": owned,
                        "prev_standby": standby, "lags": lags})  # fmt: skip
    return {"app_id": "mixed-2000x100", "configs": _configs(1), "tasks": tasks, "clients": clients}


def second_round(scenario: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The scenario fed with a first assignment: actives run (-2), standbys nearly caught up."""
    stateful = {t["id"] for t in scenario["tasks"] if t["stateful"]}
    by_pid = {c["process_id"]: c for c in result["assignment"]}
    clients = []
    for client in scenario["clients"]:
        held = by_pid.get(client["process_id"], {"active": [], "standby": []})
        lags = {t: -2 for t in held["active"] if t in stateful}
        lags.update({t: 10 for t in held["standby"]})
        clients.append(
            {**client, "prev_active": held["active"], "prev_standby": held["standby"], "lags": lags}
        )
    return {**scenario, "app_id": scenario["app_id"] + "-second", "clients": clients}


def rack_scenario(tasks: int, clients: int, strategy: str, replicas: int) -> dict[str, Any]:
    """Rack shape: 10 subtopologies, each partition on `replicas` of 3 racks, previous actives round robin."""
    subs = 10
    per_sub = max(1, tasks // subs)
    task_list = []
    for sub in range(subs):
        for p in range(per_sub):
            racks = sorted(RACKS[(sub + p + k) % 3] for k in range(replicas))
            task_list.append(_task(sub, p, True, racks))
    client_list = []
    for i in range(clients):
        owned = [t["id"] for j, t in enumerate(task_list) if j % clients == i]
        standby = [t["id"] for j, t in enumerate(task_list) if j % clients == (i + 1) % clients]
        client_list.append({"process_id": _uuid(i + 1), "threads": 1, "rack": RACKS[(i * 7) % 3],
                            "prev_active": owned, "prev_standby": standby,
                            "lags": {t: -2 for t in owned}})  # fmt: skip
    configs = _configs(1, rack_aware_assignment_strategy=strategy, rack_aware_traffic_cost=10,
                       rack_aware_non_overlap_cost=1)  # fmt: skip
    return {"app_id": f"rack-{tasks}x{clients}-{strategy}-{replicas}", "configs": configs, "tasks": task_list,
            "clients": client_list}  # fmt: skip


# --- our side -----------------------------------------------------------------------------------------


# CPU times of our last `_time_ours` call (first, warm median): on a shared machine the wall clock mostly
# measures the scheduler, so `streams_sticky` rows also compare CPU time with the oracle's thread CPU time.
_LAST_CPU: dict[str, float | None] = {}


@dataclass(frozen=True)
class Warmup:
    """Untimed calls between the first call and the timed ones: up to `calls`, stopped once they have taken
    `seconds` (both sides alike; none when nothing is timed warm)."""

    calls: int = 0
    seconds: float = 0.0


NO_WARMUP = Warmup()

# How many untimed calls our side ran before its last `_time_ours` timings.
_LAST_WARMUP: dict[str, int] = {}


def _warm_up(call: Callable[[], Any], warmup: Warmup) -> int:
    started = time.perf_counter()
    calls = 0
    while calls < warmup.calls and time.perf_counter() - started < warmup.seconds:
        call()
        calls += 1
    return calls


def _time_ours(
    call: Callable[[], Any], repeat: int, warmup: Warmup = NO_WARMUP
) -> tuple[float, float | None]:
    started, started_cpu = time.perf_counter(), time.process_time()
    call()
    first = (time.perf_counter() - started) * 1000.0
    _LAST_CPU["first"] = (time.process_time() - started_cpu) * 1000.0
    _LAST_WARMUP["calls"] = _warm_up(call, warmup) if repeat else 0
    warm, warm_cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        call()
        warm.append((time.perf_counter() - started) * 1000.0)
        warm_cpu.append((time.process_time() - started_cpu) * 1000.0)
    _LAST_CPU["warm_median"] = statistics.median(warm_cpu) if warm_cpu else None
    return first, (statistics.median(warm) if warm else None)


def ours_assignor(
    scenario: dict[str, Any], name: str, repeat: int, warmup: Warmup = NO_WARMUP
) -> tuple[float, float | None]:
    from fleet_assignor.assignor.registry import load_assignor
    from fleet_assignor.assignor.scenario import load_scenario

    state = load_scenario(scenario, now_ms=0).application_state
    return _time_ours(lambda: load_assignor(name).assign(state), repeat, warmup)


def ours_whole_plan(
    scenario: dict[str, Any], name: str, repeat: int, warmup: Warmup = NO_WARMUP
) -> tuple[float, float | None]:
    from fleet_assignor.assignor.planner import plan
    from fleet_assignor.assignor.scenario import load_scenario

    loaded = load_scenario(scenario, now_ms=0)
    return _time_ours(lambda: plan(loaded, assignor=name), repeat, warmup)


def ours_optimizer(
    scenario: dict[str, Any], active: bool, repeat: int, warmup: Warmup = NO_WARMUP
) -> tuple[float, float | None]:
    from fleet_assignor.assignor.rack import (
        optimize_rack_aware_active_tasks,
        optimize_rack_aware_standby_tasks,
    )
    from fleet_assignor.assignor.scenario import load_scenario
    from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams, identity_assignment

    state = load_scenario(scenario, now_ms=0).application_state
    optimize = optimize_rack_aware_active_tasks if active else optimize_rack_aware_standby_tasks

    def call() -> None:
        optimize(RackAwareOptimizationParams.of(state), identity_assignment(state))

    return _time_ours(call, repeat, warmup)


def ours_plan(scenario: dict[str, Any], name: str) -> dict[str, Any]:
    from fleet_assignor.assignor.planner import plan_scenario

    return plan_scenario(scenario, assignor=name, now_ms=0)


# --- running ------------------------------------------------------------------------------------------


def _ratio(ours: float | None, kafka: float | None) -> float | None:
    return round(ours / kafka, 4) if ours is not None and kafka else None


def kafka_answer(
    scenario: dict, mode: str, repeat: int, timeout_s: float, warmup: Warmup = NO_WARMUP
) -> dict[str, Any] | None:
    """Kafka's answer from a fresh oracle JVM, or None when it runs past the timeout (the JVM is stopped):
    some of Kafka's code paths take minutes on these shapes."""
    oracle = KafkaOracle(jvm_options=("-Xss16m", "-Xmx4g"))
    answers: list[dict[str, Any]] = []
    calls = warmup.calls if repeat else 0

    def ask() -> None:
        # the JVM may be stopped by the timeout below
        with contextlib.suppress(Exception):
            budget_ms = round(warmup.seconds * 1000)
            answers.extend(oracle.run([scenario], mode, repeat=repeat, warmup=calls, warmup_ms=budget_ms))

    worker = threading.Thread(target=ask)
    worker.daemon = True
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        oracle.kill()
        worker.join(5)
        return None
    oracle.close()
    return answers[0] if answers else None


def measure(
    shape: str,
    kind: str,
    scenario: dict,
    mode: str,
    repeat: int,
    kafka: bool = True,
    timeout_s: float = 300.0,
    warmup: Warmup = NO_WARMUP,
) -> Measurement:
    m = Measurement(shape, kind, len(scenario["tasks"]), len(scenario["clients"]))
    try:
        if mode.startswith("optimize_rack"):
            active = mode.endswith("active")
            m.ours_first_ms, m.ours_median_ms = ours_optimizer(scenario, active, repeat, warmup)
            m.extra["warmup_calls"] = {"ours": _LAST_WARMUP.get("calls")}
        else:
            m.ours_first_ms, m.ours_median_ms = ours_assignor(scenario, mode, repeat, warmup)
            m.extra["warmup_calls"] = {"ours": _LAST_WARMUP.get("calls")}
            assign_cpu = dict(_LAST_CPU)
            _, m.ours_plan_median_ms = ours_whole_plan(scenario, mode, repeat, warmup)
            m.extra["warmup_calls"]["ours_plan"] = _LAST_WARMUP.get("calls")
            m.extra["plan_cpu_warm_median_ms"] = _LAST_CPU.get("warm_median")
            _LAST_CPU.update(assign_cpu)  # the CPU columns compare the assign step with Kafka's
    except Exception as error:  # reported in the JSON, never hidden
        m.note = f"ours failed: {type(error).__name__}: {error}"
    if kafka:
        answer = kafka_answer(scenario, mode, repeat, timeout_s, warmup)
        if answer is None:
            m.note = (m.note or "") + f"Kafka took over {timeout_s:.0f} s (stopped). "
        elif answer["status"] == "OK":
            m.kafka_first_ms = answer["timing"]["first_ms"]
            m.kafka_warm_median_ms = answer["timing"]["warm_median_ms"]
            m.extra.setdefault("warmup_calls", {})["kafka"] = answer["timing"].get("warmup_calls")
            if "first_cpu_ms" in answer["timing"]:
                _record_cpu(m, answer["timing"])
            if "rack_cost" in answer:
                m.extra["kafka_rack_cost"] = answer["rack_cost"]
        else:
            m.note = (m.note or "") + f" Kafka failed: {answer['exception']}"
    m.ratio_warm = _ratio(m.ours_median_ms, m.kafka_warm_median_ms)
    m.ratio_first = _ratio(m.ours_first_ms, m.kafka_first_ms)
    m.ratio_plan_warm = _ratio(m.ours_plan_median_ms, m.kafka_warm_median_ms)
    print(json.dumps(asdict(m)), flush=True)
    return m


def _record_cpu(m: Measurement, kafka_timing: dict[str, Any]) -> None:
    """CPU times of both sides (ours: the process, single-threaded; Kafka's: the calling thread)."""
    ours_warm, kafka_warm = _LAST_CPU.get("warm_median"), kafka_timing.get("warm_median_cpu_ms")
    m.extra["cpu_ms"] = {
        "ours_first": _LAST_CPU.get("first"),
        "ours_warm_median": ours_warm,
        "kafka_first": kafka_timing["first_cpu_ms"],
        "kafka_warm_median": kafka_warm,
        "ratio_warm": _ratio(ours_warm, kafka_warm),
    }


def _kafka_rack_skipped_note(tasks: int) -> str:
    if tasks > 1000:
        return "Kafka not run: its cycle-cancelling solver would take hours here"
    return (
        "Kafka not run: minutes per call (one min_traffic call took 2,320 s here, measured apart); "
        "BENCH_KAFKA_RACK_MAX_TASKS=1000 runs it"
    )


def run(args: argparse.Namespace) -> list[Measurement]:
    results: list[Measurement] = []
    warmup = Warmup(args.warmup, args.warmup_s)
    scale_shapes = [
        ("6000 tasks x 2 clients", lambda: scale_scenario(6000, 2)),
        ("1000 tasks x 1000 clients", lambda: scale_scenario(1000, 1000)),
        ("1000 tasks x 100 clients, 50 standbys", lambda: scale_scenario(1000, 100, standbys=50)),
        ("1000 tasks x 10 clients x 1000 threads", lambda: scale_scenario(1000, 10, threads=1000)),
        ("2000 tasks (10 subtopologies) x 100 clients x 2 threads, history", mixed_scenario),
    ]
    rack_sizes = ((200, 20), (1000, 50), (10_000, 200))
    assignors = SCALE_ASSIGNORS
    if args.part == "rack":
        scale_shapes = []
    if args.part in ("scale", "streams"):
        rack_sizes = ()
    if args.part == "streams":
        assignors = (STREAMS,)
    for name, build in scale_shapes:
        scenario = build()
        for assignor in assignors:
            shape = f"{name}, first"
            results.append(
                measure(
                    shape,
                    assignor,
                    scenario,
                    assignor,
                    args.repeat,
                    timeout_s=args.kafka_timeout,
                    warmup=warmup,
                )
            )
            try:
                second = second_round(scenario, ours_plan(scenario, assignor))
            except Exception as error:
                failed = Measurement(f"{name}, second", assignor, len(scenario["tasks"]),
                                     len(scenario["clients"]), note=f"ours failed: {error}")  # fmt: skip
                results.append(failed)
                continue
            shape = f"{name}, second"
            results.append(
                measure(
                    shape,
                    assignor,
                    second,
                    assignor,
                    args.repeat,
                    timeout_s=args.kafka_timeout,
                    warmup=warmup,
                )
            )
    for tasks, clients in rack_sizes:
        for strategy in ("min_traffic", "balance_subtopology"):
            for replicas in (1, 2):
                scenario = rack_scenario(tasks, clients, strategy, replicas)
                big = tasks > 200
                # Kafka's solver takes minutes per call above 200 tasks: one variant per strategy there
                # unless --kafka-rack-all.
                with_kafka = tasks <= args.kafka_rack_max_tasks and (
                    not big or replicas == 1 or args.kafka_rack_all
                )
                shape = f"rack {tasks} x {clients}, {strategy}, replicas on {replicas} of 3 racks"
                m = measure(shape, "optimize_rack_active", scenario, "optimize_rack_active",
                            0 if big else args.repeat, kafka=with_kafka,
                            timeout_s=3600 if big else args.kafka_timeout, warmup=warmup)  # fmt: skip
                if not with_kafka:
                    m.note = (m.note or "") + _kafka_rack_skipped_note(tasks)
                results.append(m)
    return results


def _shape_family(shape: str) -> str:
    """A scale shape without its round: "6000 tasks x 2 clients, first" -> "6000 tasks x 2 clients"."""
    head, _, last = shape.rpartition(", ")
    return head if head and last in ("first", "second") else shape


def merge_streams_rows(earlier: list[dict[str, Any]], streams: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The earlier shapes with their `streams_sticky` rows replaced by `streams`, each new row placed after
    the last earlier row of its shape's two rounds, as a full run orders them (each assignor's first and
    second round, one assignor after the other)."""
    kept = [s for s in earlier if s["kind"] != STREAMS]
    last_of_shape = {_shape_family(row["shape"]): i for i, row in enumerate(kept)}
    after: dict[int, list[dict[str, Any]]] = {}
    unplaced = []
    for row in streams:
        family = _shape_family(row["shape"])
        if family in last_of_shape:
            after.setdefault(last_of_shape[family], []).append(row)
        else:
            unplaced.append(row)
    merged: list[dict[str, Any]] = []
    for i, row in enumerate(kept):
        merged += [row, *after.get(i, [])]
    return merged + unplaced


def write_results(
    results: list[Measurement], kafka_version: str, coordinator_version: str, streams_only: bool = False
) -> dict[str, Any]:
    shapes = [asdict(m) for m in results]
    earlier = json.loads(RESULTS.read_text()) if streams_only and RESULTS.is_file() else None
    if earlier is not None:
        shapes = merge_streams_rows(earlier["shapes"], shapes)
        kafka_version = earlier.get("kafka_version", kafka_version)
    document = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
        },
        "kafka_version": kafka_version,
        "kafka_coordinator_version": coordinator_version,
        "ratio": "ours / Kafka (below 1.0 = ours faster); warm = medians of warm calls, first = first calls",
        "warm": "after the first call, untimed calls on each side (per row: extra.warmup_calls; up to "
        "--warmup, stopped once they took --warmup-s), then the timed ones",
        "shapes": shapes,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(document, indent=1) + "\n")
    return document


def _fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.3g}{unit}" if value < 100 else f"{value:.0f}{unit}"


def readme_table(document: dict[str, Any]) -> str:
    lines = [
        TABLE_START,
        f"Measured by `make bench-kafka` on {document['machine']['cpu_count']} cores (shared), Kafka "
        f"{document['kafka_version']}, the broker-side `streams_sticky` against kafka-group-coordinator "
        f"{document.get('kafka_coordinator_version', '?')} "
        "(from `benchmarks/results/kafka_ratios.json`; ratio = ours / Kafka).",
        "",
        "Assign: the assignor alone, as Kafka's column. Whole plan: what the CLI and the job run for one "
        "application (assign, validation, distribution over threads, metrics, the result), against Kafka's "
        "assign alone. Warm: the median of the timed calls after each side's untimed warm-up calls (rows "
        "without `warmup_calls` in the JSON were measured without them).",
        "",
        "| shape | assignor | ours first | ours assign median | ours whole plan median | Kafka first "
        "| Kafka warm median | ratio assign warm | ratio whole plan warm | ratio first |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in document["shapes"]:
        lines.append(
            f"| {s['shape']} | {s['kind']} | {_fmt(s['ours_first_ms'], ' ms')} "
            f"| {_fmt(s['ours_median_ms'], ' ms')} | {_fmt(s.get('ours_plan_median_ms'), ' ms')} "
            f"| {_fmt(s['kafka_first_ms'], ' ms')} | {_fmt(s['kafka_warm_median_ms'], ' ms')} "
            f"| {_fmt(s['ratio_warm'], 'x')} | {_fmt(s.get('ratio_plan_warm'), 'x')} "
            f"| {_fmt(s['ratio_first'], 'x')} |"
        )
    notes = [f"* {s['shape']} ({s['kind']}): {s['note'].strip()}" for s in document["shapes"] if s["note"]]
    cpu = [(s, s["extra"]["cpu_ms"]) for s in document["shapes"] if "cpu_ms" in s.get("extra", {})]
    if cpu:
        lines += [
            "",
            "CPU time of the same calls (ours: the process; Kafka: the calling thread), which the machine's "
            "other load does not inflate:",
            "",
            "| shape | assignor | ours warm CPU | Kafka warm CPU | ratio |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {s['shape']} | {s['kind']} | {_fmt(c['ours_warm_median'], ' ms')} "
            f"| {_fmt(c['kafka_warm_median'], ' ms')} | {_fmt(c['ratio_warm'], 'x')} |"
            for s, c in cpu
        ]
    if notes:
        lines += ["", *notes]
    lines.append(TABLE_END)
    return "\n".join(lines)


def update_readme(document: dict[str, Any]) -> None:
    text = README.read_text()
    table = readme_table(document)
    if TABLE_START in text and TABLE_END in text:
        head, rest = text.split(TABLE_START, 1)
        _, tail = rest.split(TABLE_END, 1)
        text = head + table + tail
    else:
        text = text.rstrip("\n") + "\n\n### Ours vs Kafka (speed)\n\n" + table + "\n"
    README.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_KAFKA_REPEAT", "5")))
    # Steady state, not the JIT's start (module docstring): calls at ~3 ms reach it within a few hundred
    # calls; a call of seconds is stopped by the time limit after a few.
    parser.add_argument("--warmup", type=int, default=int(os.environ.get("BENCH_KAFKA_WARMUP", "300")),
                        help="untimed calls per side before the timed ones (at most)")  # fmt: skip
    parser.add_argument("--warmup-s", type=float, default=float(os.environ.get("BENCH_KAFKA_WARMUP_S", "10")),
                        help="stop the untimed calls once they took this long")  # fmt: skip
    parser.add_argument("--kafka-rack-max-tasks", type=int,
                        default=int(os.environ.get("BENCH_KAFKA_RACK_MAX_TASKS", "200")))  # fmt: skip
    parser.add_argument("--kafka-rack-all", action="store_true", help="Kafka on every rack variant up to max")
    # 60 s: Kafka's slowest finishing shape takes ~25 s for its six calls on a slow hour, and its sticky
    # assignor does not finish 6,000 x 2 or 50 standbys within minutes (four such runs at 180 s each
    # made `make bench-kafka` wait ~12 minutes for nothing).
    parser.add_argument("--kafka-timeout", type=float,
                        default=float(os.environ.get("BENCH_KAFKA_TIMEOUT_S", "60")))  # fmt: skip
    parser.add_argument("--no-readme", action="store_true", help="write the JSON only")
    parser.add_argument("--readme-only", action="store_true", help="rebuild the docs table from the JSON")
    parser.add_argument(
        "--part", choices=("all", "scale", "rack", "streams"), default="all", help="which shapes to run"
    )
    args = parser.parse_args(argv)
    if args.readme_only:
        update_readme(json.loads(RESULTS.read_text()))
        return 0
    logging.disable(logging.WARNING)
    results = run(args)
    with KafkaOracle() as oracle:
        version = oracle.run_lines(['{"mode":"sticky","clients":[],"tasks":[]}'])[0].get("kafka_version", "?")
        coordinator = oracle.run([{"clients": [], "tasks": []}], STREAMS)[0].get("kafka_version", "?")
    document = write_results(results, version, coordinator, streams_only=args.part == "streams")
    if not args.no_readme:
        update_readme(document)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
