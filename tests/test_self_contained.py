"""The repository stands on its own: a copy of the checkout alone, in an empty folder with nothing beside
it, runs the README's one-application command with its own code and its own test data."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.test_readme import assignor_commands

REPO = Path(__file__).resolve().parents[1]


def _copy_checkout(target: Path) -> Path:
    """The files git tracks (what a clone has), copied into `target`."""
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    for name in listing.stdout.decode().split("\0"):
        if name and (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def test_a_copy_of_the_checkout_alone_runs_a_readme_command(tmp_path):
    copy = _copy_checkout(tmp_path / "empty" / "fleet-assignor")
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == ["fleet-assignor"]
    # The copy's own code: `fleet_assignor` resolves to the copy (first on the path, before this checkout's
    # editable install).
    site = tmp_path / "site"
    site.mkdir()
    (site / "fleet_assignor").symlink_to(copy, target_is_directory=True)
    command = next(c for c in assignor_commands() if " plan " in c and "--out" not in c)
    argv = [sys.executable, *shlex.split(command)[1:]]
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "OK"
    probe = subprocess.run(
        [sys.executable, "-c", "import fleet_assignor.assignor as a; print(a.__file__)"],
        cwd=copy, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip().startswith(str(site / "fleet_assignor")), probe.stdout
