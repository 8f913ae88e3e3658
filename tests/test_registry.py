"""Finding assignors by name: built-ins (imported lazily), ``module:Class``, and clear errors otherwise."""

from __future__ import annotations

import importlib
import re
import sys
import types

import pytest

from fleet_assignor.assignor.registry import BUILTIN_ASSIGNORS, UnknownAssignorError, load_assignor


class Custom:
    def assign(self, application_state):
        raise NotImplementedError


class NoAssign:
    def configure(self, configs):
        pass


class NeedsArguments:
    def __init__(self, required):
        self.required = required

    def assign(self, application_state):
        raise NotImplementedError


class Outer:
    class Inner:
        def assign(self, application_state):
            raise NotImplementedError


@pytest.fixture
def custom_module(monkeypatch):
    module = types.ModuleType("registry_test_assignors")
    for cls in (Custom, NoAssign, NeedsArguments, Outer):
        setattr(module, cls.__name__, cls)
    module.not_a_class = Custom()
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module.__name__


def test_the_built_in_assignors_load_by_name():
    from fleet_assignor.assignor.fallback import FallbackPriorTaskAssignor
    from fleet_assignor.assignor.high_availability import HighAvailabilityTaskAssignor
    from fleet_assignor.assignor.sticky import StickyTaskAssignor
    from fleet_assignor.assignor.streams_sticky import StreamsStickyTaskAssignor

    assert isinstance(load_assignor("streams_sticky"), StreamsStickyTaskAssignor)
    assert isinstance(load_assignor("fallback_prior"), FallbackPriorTaskAssignor)
    assert isinstance(load_assignor("high_availability"), HighAvailabilityTaskAssignor)
    assert isinstance(load_assignor("sticky"), StickyTaskAssignor)


def test_the_built_in_names_point_at_the_agreed_classes():
    assert BUILTIN_ASSIGNORS == {
        "high_availability": "fleet_assignor.assignor.high_availability:HighAvailabilityTaskAssignor",
        "sticky": "fleet_assignor.assignor.sticky:StickyTaskAssignor",
        "fallback_prior": "fleet_assignor.assignor.fallback:FallbackPriorTaskAssignor",
        "streams_sticky": "fleet_assignor.assignor.streams_sticky:StreamsStickyTaskAssignor",
    }


def test_each_load_gives_a_fresh_instance(custom_module):
    first, second = load_assignor(f"{custom_module}:Custom"), load_assignor(f"{custom_module}:Custom")
    assert isinstance(first, Custom)
    assert first is not second


@pytest.mark.parametrize("name", sorted(BUILTIN_ASSIGNORS))
def test_each_load_of_a_built_in_gives_a_fresh_instance_of_its_class(name):
    module_name, _, class_name = BUILTIN_ASSIGNORS[name].partition(":")
    first, second = load_assignor(name), load_assignor(name)
    assert type(first) is type(second) is getattr(importlib.import_module(module_name), class_name)
    assert first is not second


def test_a_nested_class_can_be_named(custom_module):
    assert isinstance(load_assignor(f"{custom_module}:Outer.Inner"), Outer.Inner)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "round_robin",
            "unknown assignor 'round_robin': use one of high_availability, sticky, fallback_prior",
        ),
        ("", "unknown assignor ''"),
        ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
        ("{m}:Missing", "has no 'Missing'"),
        ("{m}:NoAssign", "class 'NoAssign' has no assign() method"),
        ("{m}:not_a_class", "'not_a_class' is not a class"),
        ("{m}:NeedsArguments", "cannot create an instance"),
        ("{m}:", "not a valid module:Class reference"),
        ("a b:C", "not a valid module:Class reference"),
    ],
)
def test_unusable_names_raise_a_clear_error(custom_module, name, message):
    with pytest.raises(UnknownAssignorError, match=re.escape(message)) as raised:
        load_assignor(name.format(m=custom_module))
    assert message in str(raised.value)


def test_a_module_that_fails_while_importing_is_unknown(monkeypatch, tmp_path):
    (tmp_path / "registry_broken_module.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UnknownAssignorError, match="cannot import module 'registry_broken_module': boom"):
        load_assignor("registry_broken_module:Anything")


def test_a_name_that_is_not_a_string_is_unknown():
    with pytest.raises(UnknownAssignorError, match="assignor name must be a string, got None"):
        load_assignor(None)  # type: ignore[arg-type]


def test_a_custom_name_outside_the_allowlist_is_refused_before_any_import(tmp_path, monkeypatch):
    marker = tmp_path / "imported"
    (tmp_path / "registry_side_effect.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\n"
        "class Zen:\n    def assign(self, state):\n        return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UnknownAssignorError, match="not allowed by the job's configuration"):
        load_assignor("registry_side_effect:Zen", allowed=frozenset({"other:Class"}))
    with pytest.raises(UnknownAssignorError, match=r"allowed_assignors: none\)"):
        load_assignor("registry_side_effect:Zen", allowed=frozenset())
    assert not marker.exists()
    assert "registry_side_effect" not in sys.modules
    # Listed: imported and instantiated.
    assert (
        type(load_assignor("registry_side_effect:Zen", allowed={"registry_side_effect:Zen"})).__name__
        == "Zen"
    )
    assert marker.exists()
    monkeypatch.delitem(sys.modules, "registry_side_effect")


def test_built_in_assignors_need_no_allowlist():
    for name in BUILTIN_ASSIGNORS:
        assert load_assignor(name, allowed=frozenset()) is not None
