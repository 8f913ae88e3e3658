"""The live harness's own checks, without a broker (tests/live/ runs the broker and the Streams instances)."""

from __future__ import annotations

import os

import pytest

from fleet_assignor.jobs.live_cluster import LiveUnavailable, check_not_older_than_sources


def _module(tmp_path, jar_age_s: float, source_age_s: float):
    module = tmp_path / "live"
    (module / "src" / "main").mkdir(parents=True)
    (module / "target").mkdir()
    jar, source, pom = module / "target" / "app.jar", module / "src" / "main" / "App.java", module / "pom.xml"
    for path in (jar, source, pom):
        path.write_text("x")
    now = 1_800_000_000
    os.utime(pom, (now - 100, now - 100))
    os.utime(source, (now - source_age_s, now - source_age_s))
    os.utime(jar, (now - jar_age_s, now - jar_age_s))
    return jar, module


def test_a_jar_built_after_its_sources_is_used(tmp_path):
    jar, module = _module(tmp_path, jar_age_s=10, source_age_s=50)
    check_not_older_than_sources(jar, module)


def test_a_jar_older_than_a_source_is_refused_naming_it(tmp_path):
    jar, module = _module(tmp_path, jar_age_s=50, source_age_s=10)
    with pytest.raises(
        LiveUnavailable, match=r"older than 1 of its sources \(src/main/App.java\): run `make setup`"
    ):
        check_not_older_than_sources(jar, module)
