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

from fleet_assignor.explore.analysis import (
    client_load,
    errors_by_type,
    fleet_rack_traffic,
    fleet_summary,
    rack_traffic,
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
    """Fleet overview, four panels: applications by status/error, active imbalance per thread, moves per
    application, restore lag per application."""
    summary = fleet_summary(run)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    errors = errors_by_type(run)
    labels = [
        s if e == "NONE" else f"{s}\n{e}" for s, e in zip(errors["status"], errors["error"], strict=False)
    ]
    axes[0, 0].barh(labels[::-1], errors["applications"].to_numpy()[::-1], color="#6a51a3")
    axes[0, 0].set_title("applications by status / error")
    _hist(axes[0, 1], summary["imbalance"], "imbalance (max - min actives per thread)")
    moves = summary["active_moves"] + summary["standby_moves"]
    _hist(axes[1, 0], moves, "tasks moved per application (active + standby)")
    _hist(axes[1, 1], summary["restore_lag"], "restore lag per application (records)")
    fig.suptitle(f"run {run.run_id}: {len(summary)} applications")
    fig.tight_layout()
    return fig


def _hist(ax, values: pd.Series, title: str) -> None:
    data = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    ax.hist(data, bins=min(30, max(1, len(np.unique(data)))), color="#3182bd")
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("applications")


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
