"""Plots draw what the analyses compute, and are written as PNG files (Agg backend)."""

from __future__ import annotations

import dataclasses
import json

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from fleet_assignor import explore
from fleet_assignor.assignor.planner import plan
from fleet_assignor.assignor.rollout import rollout_report
from fleet_assignor.assignor.scenario import load_scenario
from fleet_assignor.explore import plots
from fleet_assignor.jobs.plan_rows import is_rack_aware
from fleet_assignor.schemas.contract import rollout_row
from tests.fixtures import EXPLORE_NOW, transitions_scenario, two_clients


@pytest.fixture(scope="module")
def planned(scenarios_dir):
    scenarios = [transitions_scenario()]
    scenarios += [json.loads(p.read_text()) for p in sorted((scenarios_dir).glob("example-00[0-5].json"))]
    return explore.plan_fleet(scenarios, now_ms=EXPLORE_NOW).frames


def _bar_heights(ax, label: str) -> list[float]:
    container = next(c for c in ax.containers if c.get_label() == label)
    return [patch.get_height() for patch in container.patches]


def test_client_load_bars_are_the_client_load(planned, tmp_path):
    fig = plots.plot_client_load(planned, "example-002")
    ax = fig.axes[0]
    load = explore.client_load(planned, "example-002")
    assert _bar_heights(ax, "active") == list(load["active"])
    assert _bar_heights(ax, "standby") == list(load["standby"])
    assert _bar_heights(ax, "warmup") == list(load["warmup"])
    path = plots.save(fig, tmp_path / "load.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_transition_bars_count_each_kind(planned):
    fig = plots.plot_transitions(planned, "transitions")
    ax = fig.axes[0]
    counts = explore.transition_counts(planned, "transitions")
    for kind in explore.TRANSITION_KINDS:
        assert _bar_heights(ax, kind) == list(counts[kind]), kind


def test_rack_traffic_before_and_after_bars(planned):
    ax = plots.plot_rack_traffic(planned, "example-002").axes[0]
    traffic = explore.rack_traffic(planned, "example-002")
    assert _bar_heights(ax, "before") == list(traffic["before"].astype(float))
    assert _bar_heights(ax, "after") == list(traffic["after"].astype(float))
    fleet_ax = plots.plot_rack_traffic(planned).axes[0]
    fleet = explore.fleet_rack_traffic(planned).dropna()
    assert sorted(_bar_heights(fleet_ax, "after")) == sorted(fleet["after"].astype(float))


def test_moves_per_app_and_fleet_overview(planned, tmp_path):
    ax = plots.plot_moves(planned, top=3).axes[0]
    summary = explore.fleet_summary(planned)
    totals = (summary["active_moves"] + summary["standby_moves"] + summary["warmups"]).sort_values(
        ascending=False
    )
    stacked = [
        a + s + w
        for a, s, w in zip(
            *(_bar_heights(ax, c) for c in ("active_moves", "standby_moves", "warmups")), strict=False
        )
    ]
    assert stacked == list(totals.head(3).astype(float))
    fig = plots.plot_fleet(planned)
    # The status panel only when some application is not OK (an all-OK bar says nothing).
    all_ok = set(planned.results["status"]) == {"OK"}
    assert len(fig.axes) == (3 if all_ok else 4)
    assert "7 applications" in fig.get_suptitle()
    assert plots.save(fig, tmp_path / "fleet.png").stat().st_size > 5_000


def test_simulation_plot(tmp_path):
    sim = explore.simulate(two_clients(), now_ms=EXPLORE_NOW, catch_up_per_round=600)
    ax = plots.plot_simulation(sim).axes[0]
    assert _bar_heights(ax, "active_moves") == [0.0, 0.0, 1.0]
    assert "2 probing rebalances, converged" in ax.get_title()


def _with_rollout(scenarios: list[dict]):
    """A notebook plan of `scenarios` with the `rollout` rows the job writes, built by the pure report."""
    frames = explore.plan_fleet(scenarios, now_ms=EXPLORE_NOW).frames
    rows = []
    for obj in scenarios:
        scenario = load_scenario(obj, now_ms=EXPLORE_NOW)
        planned = plan(scenario)
        report = rollout_report(scenario, planned)
        rows.append(
            rollout_row(report, planned, is_rack_aware(scenario), run_id=frames.run_id, app_id=obj["app_id"])
        )
    return dataclasses.replace(frames, rollout=pd.DataFrame(rows))


def test_rollout_figure_totals_are_the_rollout_tables(scenarios_dir, tmp_path):
    scenarios = [json.loads(p.read_text()) for p in sorted(scenarios_dir.glob("example-00[0-5].json"))]
    run = _with_rollout(scenarios)
    table = explore.rollout(run)
    fig = plots.plot_rollout(run)
    titles = [ax.get_title() for ax in fig.axes]
    assert f"({int(table['active_moves'].sum())} moves, " in titles[0]
    assert f"({int(table['restore_records'].sum()):,} in all; " in titles[1]
    assert f"({int(table['probing_rebalances'].sum())} in all; " in titles[5]
    assert f"rollout of {len(table)} applications" in fig.get_suptitle()
    assert plots.save(fig, tmp_path / "rollout.png").stat().st_size > 5_000


def test_rollout_figure_of_one_application_counts_in_whole_applications(scenarios_dir):
    run = _with_rollout([json.loads((scenarios_dir / "example-001.json").read_text())])
    fig = plots.plot_rollout(run)
    assert not any(" 1 apps" in ax.get_title() for ax in fig.axes)
    for ax in fig.axes:
        if ax.get_ylabel() == "applications":
            ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
            assert ticks and all(float(t).is_integer() for t in ticks), (ax.get_title(), ticks)
