"""The wheel as users install it: one top-level package (`fleet_assignor`) with the job's defaults, Spark
and Delta only behind the `local` extra, and the assignor core and one-application CLI working without
them. Built offline from this checkout (no download)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.conftest import SCENARIOS_DIR

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(out), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("fleet_assignor-*.whl")
    return built


def test_the_wheel_has_one_top_level_package_and_ships_its_defaults(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"fleet_assignor"}
    assert "fleet_assignor/conf/defaults.toml" in names
    assert "fleet_assignor/conf/log4j2.properties" in names
    assert "fleet_assignor/jobs/spark_submit_main.py" in names
    assert not [n for n in names if n.startswith("fleet_assignor/tests/")]


def test_the_wheel_ships_the_spark_submit_log4j2_config_as_in_the_repo(wheel):
    """`-Dlog4j2.configurationFile=<site-packages>/fleet_assignor/conf/log4j2.properties` works from an
    installed wheel: the file is there, byte for byte the repository's."""
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("fleet_assignor/conf/log4j2.properties")
    assert shipped == (REPO / "conf" / "log4j2.properties").read_bytes()
    assert b"rootLogger.level = warn" in shipped


def test_spark_and_delta_are_only_in_the_local_extra(wheel):
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = Parser().parsestr(archive.read(meta).decode()).get_all("Requires-Dist")
    spark = [r for r in requires if r.startswith(("pyspark", "delta-spark"))]
    assert spark and all("extra ==" in r for r in spark), spark  # never installed unless asked for
    local = sorted(r.split(">")[0].split("<")[0] for r in spark if 'extra == "local"' in r)
    assert local == ["delta-spark", "pyspark"], spark
    core = [r for r in requires if "extra ==" not in r]
    assert core and all("==" not in r.split(";")[0] for r in core), core  # ranges, not pins


def test_without_the_extra_the_assignor_and_the_one_app_cli_run(wheel, tmp_path):
    """A fresh venv with the wheel (no dependencies installed from it) and only the core's third-party
    packages visible: importing pyspark or delta fails there, the assignor and the CLI work."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([python, "-c", purelib], text=True).strip())
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # numpy, scipy, pandas, pyarrow from this environment; Spark and Delta hidden.
    (site / "core_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "no_spark.pth").write_text("import no_spark_hook\n")
    (site / "no_spark_hook.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pyspark', 'delta', 'py4j'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    check = subprocess.run(
        [python, "-c", "import fleet_assignor.assignor, fleet_assignor; print(fleet_assignor.__file__)\n"
         "try:\n    import pyspark\nexcept ModuleNotFoundError:\n    print('no pyspark')"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(site) in check.stdout and "no pyspark" in check.stdout, check.stdout
    scenario = SCENARIOS_DIR / "example-004.json"
    done = subprocess.run([python, "-m", "fleet_assignor", "app", "plan", str(scenario), "--now-ms", "0"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "OK"
