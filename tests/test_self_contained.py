"""The repository stands on its own: a copy of the checkout alone, in an empty folder with nothing beside
it, runs the README's one-application command with its own code and its own test data. And the tests stand
on their own: no test module imports from another (shared helpers live in tests/fixtures.py)."""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fixtures import assignor_commands

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"


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


def _test_module_imports(source: str, filename: str = "<source>") -> list[str]:
    """The `tests.test_*` modules the source imports: `import tests.test_x`, `from tests.test_x import ...`,
    `from tests import test_x` and the relative forms, at any depth (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("tests.test_")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and module.startswith("tests.test_"):
                found.append(module)
            elif node.level > 0 and module.startswith("test_"):
                found.append(f"tests.{module}")
            elif (node.level == 0 and module == "tests") or (node.level > 0 and not module):
                found += [f"tests.{a.name}" for a in node.names if a.name.startswith("test_")]
    return sorted(found)


def test_no_test_module_imports_another_test_module():
    """Shared helpers live in tests/fixtures.py: importing a test module's helpers would also import (and
    couple to) that module's tests and fixtures."""
    modules = sorted(p for p in TESTS.rglob("*.py") if p.name != "conftest.py")
    assert TESTS / "fixtures.py" in modules and len(modules) > 50
    offenders = {
        str(p.relative_to(REPO)): imported
        for p in modules
        if (imported := _test_module_imports(p.read_text(), str(p)))
    }
    assert offenders == {}


def test_the_import_scan_sees_every_form_of_import():
    source = (
        "import tests.test_a\nfrom tests.test_b import x\nfrom tests import test_c, fixtures\n"
        "from .test_d import y\nfrom . import test_e\nfrom tests.fixtures import z\nimport tests.fixtures\n"
        "def f():\n    from tests.test_f import w\n"
    )
    assert _test_module_imports(source) == [f"tests.test_{x}" for x in "abcdef"]
