"""Matplotlib figures of a run, a comparison or a simulation.

Each function returns a `Figure` (drawn on `ax` when given) that a notebook shows inline and `save`
writes as PNG. Nothing here selects a backend: tests and headless runs use Agg (MPLBACKEND=Agg).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from fleet_assignor.explore.analysis import (
    client_load,
    errors_by_type,
    fleet_rack_traffic,
    fleet_summary,
    rack_traffic,
    rollout,
)
from fleet_assignor.explore.frames import RunFrames
from fleet_assignor.explore.simulate import Simulation
from fleet_assignor.explore.transitions import TRANSITION_KINDS, transition_counts

COLORS = {
    "active": "#1f77b4",
    "standby": "#ff7f0e",
    "warmup": "#2ca02c",
    "before": "#9e9e9e",
    "after": "#1f77b4",
}


def short_id(process_id: str) -> str:
    """A readable label for a client: the last 6 hex digits (synthetic ids differ at the end)."""
    return str(process_id)[-6:]


def _axes(ax, figsize=(8, 4)):
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def save(fig: Figure, path: str | Path, *, dpi: int = 110, close: bool = True) -> Path:
    """Write the figure as PNG (parent dirs created); close it unless a notebook still wants to show it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    if close:
        plt.close(fig)
    return path


def plot_client_load(run: RunFrames, app_id: str, ax=None) -> Figure:
    """Stacked bars per client: actives, standbys, warmups."""
    load = client_load(run, app_id)
    fig, ax = _axes(ax)
    x = np.arange(len(load))
    bottom = np.zeros(len(load))
    for kind in ("active", "standby", "warmup"):
        values = load[kind].to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, label=kind, color=COLORS[kind])
        bottom += values
    ax.set_xticks(x, [short_id(p) for p in load["process_id"]], rotation=90, fontsize=7)
    ax.set_ylabel("tasks")
    ax.set_title(f"{app_id}: load per client")
    ax.legend()
    return fig


def plot_transitions(run: RunFrames, app_id: str, ax=None) -> Figure:
    """Stacked bars per client of task transitions by kind: what each client keeps, starts and stops."""
    counts = transition_counts(run, app_id)
    fig, ax = _axes(ax)
    x = np.arange(len(counts))
    bottom = np.zeros(len(counts))
    cmap = plt.get_cmap("tab10")
    for i, kind in enumerate(TRANSITION_KINDS):
        values = counts[kind].to_numpy(dtype=float)
        if values.any():
            ax.bar(x, values, bottom=bottom, label=kind, color=cmap(i))
        bottom += values
    ax.set_xticks(x, [short_id(p) for p in counts["process_id"]], rotation=90, fontsize=7)
    ax.set_ylabel("tasks")
    ax.set_title(f"{app_id}: task transitions per client")
    ax.legend(fontsize=7)
    return fig


def plot_moves(run: RunFrames, ax=None, top: int = 30) -> Figure:
    """Moves per application (active, standby, warmups), the `top` applications with most moves."""
    summary = fleet_summary(run)
    summary = summary[summary["active_moves"].notna()].copy()
    summary["total"] = summary["active_moves"] + summary["standby_moves"] + summary["warmups"]
    summary = summary.sort_values(["total", "app_id"], ascending=[False, True]).head(top)
    fig, ax = _axes(ax, figsize=(10, 4))
    x = np.arange(len(summary))
    bottom = np.zeros(len(summary))
    for column, kind in (("active_moves", "active"), ("standby_moves", "standby"), ("warmups", "warmup")):
        values = summary[column].to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, label=column, color=COLORS[kind])
        bottom += values
    ax.set_xticks(x, list(summary["app_id"]), rotation=90, fontsize=7)
    ax.set_ylabel("tasks")
    ax.set_title(f"moves per application (top {len(summary)})")
    ax.legend()
    return fig


def plot_rack_traffic(run: RunFrames, app_id: str | None = None, ax=None, top: int = 30) -> Figure:
    """Cross-rack partitions before (previous assignment) and after the plan: per client of one
    application, or per application (the `top` with most traffic before and after) for the fleet."""
    if app_id is None:
        table = fleet_rack_traffic(run).dropna()
        table = table.assign(total=table["before"] + table["after"])
        table = table.sort_values(["total", "app_id"], ascending=[False, True]).head(top)
        labels, title = list(table["app_id"]), f"cross-rack partitions per application (top {len(table)})"
    else:
        table = rack_traffic(run, app_id).fillna(0)
        labels, title = (
            [short_id(p) for p in table["process_id"]],
            f"{app_id}: cross-rack partitions per client",
        )
    fig, ax = _axes(ax, figsize=(10, 4))
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["before"].to_numpy(dtype=float), 0.4, label="before", color=COLORS["before"])
    ax.bar(x + 0.2, table["after"].to_numpy(dtype=float), 0.4, label="after", color=COLORS["after"])
    ax.set_xticks(x, labels, rotation=90, fontsize=7)
    ax.set_ylabel("partitions fetched across racks")
    ax.set_title(title)
    ax.legend()
    return fig


def plot_fleet(run: RunFrames) -> Figure:
    """Fleet overview: applications by status/error (only when some application is not OK: an all-OK bar
    says nothing), active imbalance per thread, moves per application, restore lag per application."""
    summary = fleet_summary(run)
    errors = errors_by_type(run)
    all_ok = len(errors) == 1 and errors["status"].iloc[0] == "OK"
    fig, axes = plt.subplots(1, 3, figsize=(14, 4)) if all_ok else plt.subplots(2, 2, figsize=(11, 7))
    panels = list(np.ravel(axes))
    if not all_ok:
        ax = panels.pop(0)
        labels = [
            s if e == "NONE" else f"{s}\n{e}" for s, e in zip(errors["status"], errors["error"], strict=True)
        ]
        ax.barh(labels[::-1], errors["applications"].to_numpy()[::-1], color="#6a51a3")
        ax.set_title("applications by status / error")
    _hist(panels[0], summary["imbalance"], "imbalance (max - min actives per thread)")
    moves = summary["active_moves"] + summary["standby_moves"]
    _hist(panels[1], moves, f"tasks moved per application (total {int(moves.sum())})")
    lag = summary["restore_lag"]
    _hist(panels[2], lag, f"restore lag per application (total {int(lag.sum())} records)")
    ok = "all OK" if all_ok else f"{int((summary['status'] == 'OK').sum())} OK"
    fig.suptitle(f"run {run.run_id}: {len(summary)} applications, {ok}")
    fig.tight_layout()
    return fig


def plot_rollout(run: RunFrames) -> Figure:
    """What rolling the run's plan out costs (the `rollout` table), six panels: moves as a share of each
    application's tasks, restore records (log scale), active and standby balance before and after,
    cross-rack partitions before and after (rack-aware applications marked), simulated probing rebalances,
    and applications flagged per risk. Totals are in the titles."""
    table = rollout(run)
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
    _share_panel(axes[0, 0], table)
    _restore_panel(axes[0, 1], table)
    _before_after(
        axes[0, 2], table, "active_balance_per_thread", "active balance (max - min actives per thread)"
    )
    _before_after(
        axes[1, 0], table, "standby_balance_per_thread", "standby balance (max - min standbys per thread)"
    )
    _rack_panel(axes[1, 1], table)
    _rounds_and_flags(axes[1, 2], table)
    flagged = int((table["num_flags"] > 0).sum())
    fig.suptitle(f"run {run.run_id}: rollout of {len(table)} applications, {flagged} flagged for review")
    fig.tight_layout()
    return fig


def _share_panel(ax, table: pd.DataFrame) -> None:
    shares = table["active_moves_fraction"].to_numpy(dtype=float)
    ax.hist(shares, bins=np.linspace(0, 1, 21), color=COLORS["active"])
    over = int((shares > 0.5).sum())
    ax.set_title(f"active moves / tasks ({int(table['active_moves'].sum())} moves, {_apps(over)} over half)")
    ax.set_xlabel("share of the application's tasks")
    _count_axis(ax)


def _restore_panel(ax, table: pd.DataFrame) -> None:
    records = table["restore_records"].to_numpy(dtype=float)
    none = int((records <= 0).sum())
    positive = records[records > 0]
    if len(positive):
        ax.hist(positive, bins=np.logspace(0, np.log10(positive.max()) + 0.1, 25), color=COLORS["standby"])
        ax.set_xscale("log")
    ax.set_title(f"records to restore ({int(records.sum()):,} in all; {_apps(none)} none)")
    ax.set_xlabel("changelog records (log scale)")
    _count_axis(ax)


def _before_after(ax, table: pd.DataFrame, column: str, title: str) -> None:
    before = table[f"{column}_before"].to_numpy(dtype=float)
    after = table[f"{column}_after"].to_numpy(dtype=float)
    top = max(float(np.nanmax(before, initial=0)), float(np.nanmax(after, initial=0)), 1.0)
    ax.plot([0, top], [0, top], color=COLORS["before"], linewidth=1)
    ax.scatter(before, after, s=12, alpha=0.6, color=COLORS["after"])
    worse = int((after > before).sum())
    better = int((after < before).sum())
    ax.set_title(f"{title}\n{_apps(better)} better, {worse} worse (above the line)", fontsize=10)
    ax.set_xlabel("before (the previous assignment)")
    ax.set_ylabel("after (the plan)")


def _rack_panel(ax, table: pd.DataFrame) -> None:
    known = table[table["cross_rack_before"].notna() & table["cross_rack_after"].notna()]
    before = known["cross_rack_before"].to_numpy(dtype=float)
    after = known["cross_rack_after"].to_numpy(dtype=float)
    top = max(float(np.max(before, initial=0)), float(np.max(after, initial=0)), 1.0)
    ax.plot([0, top], [0, top], color=COLORS["before"], linewidth=1)
    aware = known["rack_aware"].to_numpy(dtype=bool)
    ax.scatter(before[aware], after[aware], s=12, alpha=0.7, color=COLORS["warmup"], label="rack-aware")
    ax.scatter(before[~aware], after[~aware], s=12, alpha=0.7, color=COLORS["after"], label="not rack-aware")
    ax.set_title(
        f"cross-rack partitions: {int(before.sum())} before, {int(after.sum())} after "
        f"({_apps(len(table) - len(known))} without racks)",
        fontsize=10,
    )
    ax.set_xlabel("before")
    ax.set_ylabel("after")
    ax.legend(fontsize=8)


def _rounds_and_flags(ax, table: pd.DataFrame) -> None:
    rounds = table["probing_rebalances"].astype(int)
    counts = rounds.value_counts().sort_index()
    ax.bar(counts.index.astype(str), counts.to_numpy(), color=COLORS["active"])
    cut = int(table["truncated"].sum())
    ax.set_title(
        f"simulated probing rebalances per application\n({int(rounds.sum())} in all; {cut} simulations cut "
        "at their bound)",
        fontsize=10,
    )
    ax.set_xlabel("probing rebalances until no follow-up")
    _count_axis(ax)
    flags: dict[str, int] = {}
    for risks in table["risks"]:
        for flag in risks:
            flags[str(flag["name"])] = flags.get(str(flag["name"]), 0) + 1
    if flags:
        text = "flagged:\n" + "\n".join(f"{n}: {c}" for n, c in sorted(flags.items()))
        ax.text(0.98, 0.97, text, transform=ax.transAxes, ha="right", va="top", fontsize=8,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "#cccccc"})  # fmt: skip


def _hist(ax, values: pd.Series, title: str) -> None:
    data = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    ax.hist(data, bins=min(30, max(1, len(np.unique(data)))), color="#3182bd")
    ax.set_title(title, fontsize=9)
    _count_axis(ax)


def _apps(count: int) -> str:
    return f"{count} app" if count == 1 else f"{count} apps"


def _count_axis(ax) -> None:
    """A y axis counting applications: whole numbers only (a small fleet got ticks at 0.25)."""
    ax.set_ylabel("applications")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def plot_simulation(simulation: Simulation, ax=None) -> Figure:
    """Tasks moved per round (active, standby, warmups), rounds followed by a probing rebalance marked."""
    summary = simulation.summary()
    fig, ax = _axes(ax)
    x = summary["round"].to_numpy()
    bottom = np.zeros(len(summary))
    for column, kind in (("active_moves", "active"), ("standby_moves", "standby"), ("warmups", "warmup")):
        values = summary[column].fillna(0).to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, label=column, color=COLORS[kind])
        bottom += values
    for r, probing in zip(x, summary["probing_rebalance"], strict=False):
        if probing:
            ax.annotate("probe", (r, 0), textcoords="offset points", xytext=(0, -22), ha="center", fontsize=7)
    ax.set_xticks(x)
    ax.set_xlabel("round")
    ax.set_ylabel("tasks")
    state = "converged" if simulation.converged else "not converged"
    ax.set_title(f"simulation: {simulation.probing_rebalances} probing rebalances, {state}")
    ax.legend()
    return fig
