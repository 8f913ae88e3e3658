"""Writes `tests/data/scenarios/kafka/example-NNN.streams_sticky.json`: the answer of Kafka 4.4.0's
broker-side StickyTaskAssignor (kafka-group-coordinator, run by the oracle) on every example scenario.

Run by hand after changing the oracle's input mapping:
``.venv/bin/python -m tests.write_streams_sticky_answers``.
The tests only read the files (Kafka's answers are test data, like the other modes' answers).
"""

from __future__ import annotations

import json

from tests.conftest import SCENARIOS_DIR
from tests.kafka_oracle import KafkaOracle

MODE = "streams_sticky"


def kafka_answer(result: dict) -> dict:
    """The oracle's result in the answer files' shape, with the per-member split the broker decides."""
    return {
        "assignment": [
            {
                "process_id": c["process_id"],
                "active": c["active"],
                "standby": c["standby"],
                "consumers": c["consumers"],
            }
            for c in result["assignment"]
        ],
        "assignor": MODE,
        "kafka": "kafka-group-coordinator 4.4.0",
        "probing_rebalance": result["probing_rebalance"],
        "validation_error": result["error"],
    }


def main() -> None:
    names = sorted(p.name for p in SCENARIOS_DIR.glob("example-*.json"))
    scenarios = [json.loads((SCENARIOS_DIR / name).read_text()) for name in names]
    with KafkaOracle() as oracle:
        results = oracle.run(scenarios, MODE)
    for name, result in zip(names, results, strict=False):
        if result["status"] != "OK":
            raise SystemExit(f"{name}: {result['exception']}")
        target = SCENARIOS_DIR / "kafka" / name.replace(".json", f".{MODE}.json")
        target.write_text(json.dumps(kafka_answer(result), indent=1, sort_keys=True) + "\n")
        print(target)


if __name__ == "__main__":
    main()
