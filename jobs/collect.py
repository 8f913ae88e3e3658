"""`fleet-assignor collect`: one snapshot of every Kafka Streams application on a cluster, written to the six
input tables of tables.md so that `fleet-assignor plan --input-path DIR` plans what was live.

    fleet-assignor collect --bootstrap-servers HOST:PORT[,...] --output-path DIR [--cluster-id ID]
                           [--groups REGEX] [--admin-config FILE] [--app-configs FILE] [--timeout-ms N]
    python -m fleet_assignor.jobs.collect ...   (the same)

Reading: ``fleet.live.Snapshot`` (``live/``, built by `make setup`), a read-only Kafka Admin client run as a
JVM helper, prints one JSON snapshot; `jobs.live_snapshot` turns it into rows. Writing: each table's rows
replace that table's content in one Delta transaction (a new version; earlier snapshots stay readable by
time travel, e.g. `plan --as-of-version`), so a reader never sees half of a table's snapshot. The versions
written are printed; pass them to `plan --as-of-version` to plan exactly this snapshot even if another
collect runs meanwhile.

--admin-config is a Kafka client properties file (security.protocol, sasl.*, ssl.*): it is passed to the
helper as a file and never logged or written to the tables. Exit codes: 0 snapshot written (groups that could
not be read are listed), 2 unusable input or a cluster that cannot be reached (one "error:" line, nothing
written).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet_assignor.jobs.live_cluster import LiveUnavailable, app_classpath, check_built, java_executable
from fleet_assignor.jobs.live_snapshot import AppConfigsError, SnapshotRows, load_app_configs, snapshot_rows

log = logging.getLogger("fleet_assignor.collect")

SNAPSHOT_MAIN = "fleet.live.Snapshot"
DEFAULT_TIMEOUT_MS = 30_000
# Extra columns of `applications` (tables.md allows extra columns; `plan` ignores them).
APPLICATIONS_EXTRA = ("group_protocol", "config_sources", "snapshot_at_ms")


class CollectError(RuntimeError):
    """The snapshot could not be taken at all (nothing is written)."""


@dataclass(frozen=True)
class CollectResult:
    rows: SnapshotRows
    versions: dict[str, int]
    output_path: str
    seconds: float
    read_seconds: float

    def text(self) -> str:
        r = self.rows
        lines = [
            f"snapshot of cluster {r.cluster_id} at {r.snapshot_at_ms} ms: {len(r.collected)} applications "
            f"collected, {len(r.skipped)} groups skipped "
            f"({self.seconds:.1f} s, reading {self.read_seconds:.1f} s)",
        ]
        lines += [f"  skipped {s}" for s in r.skipped]
        lines += [f"  warning {w}" for w in r.warnings]
        lines.append("  rows: " + ", ".join(f"{t}={len(v)}" for t, v in r.tables.items()))
        lines.append("  versions: " + ", ".join(f"{t}={v}" for t, v in self.versions.items()))
        lines.append(f"  plan it: fleet-assignor plan --input-path {self.output_path} --output-path OUT")
        return "\n".join(lines)


def read_snapshot(
    bootstrap_servers: str,
    *,
    groups: str | None = None,
    admin_config: str | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> dict[str, Any]:
    """Run the JVM helper and return its JSON snapshot; CollectError with one line when it cannot."""
    try:
        check_built()
        java = java_executable()
    except LiveUnavailable as e:
        raise CollectError(str(e)) from e
    command = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", app_classpath()]
    command += [SNAPSHOT_MAIN, "--bootstrap-servers", bootstrap_servers, "--timeout-ms", str(timeout_ms)]
    if groups:
        command += ["--groups", groups]
    if admin_config:
        command += ["--admin-config", admin_config]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_ms / 1000 * 4 + 60,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise CollectError(f"the snapshot helper did not finish within {e.timeout:.0f} s") from e
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        detail = errors[-1][len("error:") :].strip() if errors else f"exit {done.returncode}"
        raise CollectError(detail)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise CollectError(f"the snapshot helper printed no JSON ({e})") from e


def _frames(spark, rows: SnapshotRows) -> dict[str, Any]:
    from pyspark.sql.types import LongType, MapType, StringType, StructField, StructType

    from fleet_assignor.schemas.spark_schemas import INPUT_TABLES

    schemas = dict(INPUT_TABLES)
    schemas["applications"] = StructType(
        [
            *INPUT_TABLES["applications"].fields,
            StructField("group_protocol", StringType(), True),
            StructField("config_sources", MapType(StringType(), StringType(), True), True),
            StructField("snapshot_at_ms", LongType(), True),
        ]
    )
    return {name: spark.createDataFrame(rows.tables[name], schemas[name]) for name in INPUT_TABLES}


def write_snapshot(spark, rows: SnapshotRows, output_path: str) -> dict[str, int]:
    """Each table replaced by the snapshot's rows in one Delta transaction; returns the versions written.

    `applications` is written last: it names the snapshot (snapshot_at_ms) once every other table holds it."""
    from delta.tables import DeltaTable

    versions = {}
    frames = _frames(spark, rows)
    order = [name for name in frames if name != "applications"] + ["applications"]
    for name in order:
        path = str(Path(output_path) / name)
        (
            frames[name]
            .write.format("delta")
            .mode("overwrite")
            .option("overwriteSchema", "false")
            .option("mergeSchema", "true")
            .save(path)
        )
        versions[name] = int(DeltaTable.forPath(spark, path).history(1).select("version").first()[0])
    return {name: versions[name] for name in frames}


def collect(
    bootstrap_servers: str,
    output_path: str,
    *,
    cluster_id: str | None = None,
    groups: str | None = None,
    admin_config: str | None = None,
    app_configs: Mapping[str, Mapping[str, Any]] | str | Path | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    spark=None,
) -> CollectResult:
    """One snapshot of the cluster into the input tables under `output_path` (module docstring)."""
    started = time.monotonic()
    if groups is not None:
        try:
            re.compile(groups)
        except re.error as e:
            raise CollectError(f"--groups {groups!r}: not a regular expression ({e})") from e
    if admin_config is not None and not Path(admin_config).is_file():
        raise CollectError(f"--admin-config {admin_config}: no such file")
    if isinstance(app_configs, (str, Path)):
        try:
            app_configs = load_app_configs(app_configs)
        except AppConfigsError as e:
            raise CollectError(str(e)) from e
    snapshot = read_snapshot(
        bootstrap_servers, groups=groups, admin_config=admin_config, timeout_ms=timeout_ms
    )
    read_seconds = time.monotonic() - started
    rows = snapshot_rows(snapshot, cluster_id=cluster_id, app_configs=app_configs or {})
    if spark is None:
        from fleet_assignor.jobs.spark import get_or_create_session

        spark = get_or_create_session("fleet-assignor-collect")
    versions = write_snapshot(spark, rows, output_path)
    return CollectResult(rows, versions, output_path, time.monotonic() - started, read_seconds)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fleet-assignor collect", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="HOST:PORT[,...] of the cluster")
    parser.add_argument(
        "--output-path", required=True, help="directory of the input Delta tables DIR/<table>"
    )
    parser.add_argument(
        "--cluster-id", help="cluster_id written to applications/partition_racks (default: Kafka's)"
    )
    parser.add_argument("--groups", help="regular expression: collect only the group ids it matches fully")
    parser.add_argument("--admin-config", help="Kafka client properties file (security, SASL, TLS)")
    parser.add_argument("--app-configs", help="JSON per application: configs the cluster does not hold")
    parser.add_argument(
        "--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS, help="per Kafka request (30000)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        result = collect(
            args.bootstrap_servers,
            args.output_path,
            cluster_id=args.cluster_id,
            groups=args.groups,
            admin_config=args.admin_config,
            app_configs=args.app_configs,
            timeout_ms=args.timeout_ms,
        )
    except CollectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(result.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
