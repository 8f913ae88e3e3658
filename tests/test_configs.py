import re

import pytest

from fleet_assignor.assignor import AssignmentConfigs, ConfigException, RackAwareStrategy


def test_defaults_are_kafkas():
    c = AssignmentConfigs()
    assert (c.acceptable_recovery_lag, c.max_warmup_replicas, c.num_standby_replicas) == (10_000, 2, 0)
    assert c.probing_rebalance_interval_ms == 600_000
    assert c.rack_aware_assignment_tags == ()
    assert c.rack_aware_traffic_cost is None and c.rack_aware_non_overlap_cost is None
    assert c.rack_aware_assignment_strategy is RackAwareStrategy.NONE


@pytest.mark.parametrize(
    "kwargs, config",
    [
        ({"acceptable_recovery_lag": -1}, "acceptable_recovery_lag"),
        ({"max_warmup_replicas": 0}, "max_warmup_replicas"),
        ({"num_standby_replicas": -1}, "num_standby_replicas"),
        ({"probing_rebalance_interval_ms": 59_999}, "probing_rebalance_interval_ms"),
        ({"rack_aware_assignment_tags": ["a", "b", "c", "d", "e", "f"]}, "rack_aware_assignment_tags"),
        ({"rack_aware_assignment_tags": "zone"}, "rack_aware_assignment_tags"),
        ({"rack_aware_traffic_cost": -1}, "rack_aware_traffic_cost"),
        ({"rack_aware_non_overlap_cost": -5}, "rack_aware_non_overlap_cost"),
        ({"rack_aware_assignment_strategy": "fastest"}, "rack_aware_assignment_strategy"),
        ({"max_warmup_replicas": 1.5}, "max_warmup_replicas"),
        ({"num_standby_replicas": True}, "num_standby_replicas"),
    ],
)
def test_invalid_values_are_rejected_naming_the_config(kwargs, config):
    with pytest.raises(ConfigException, match=re.escape(config)) as caught:
        AssignmentConfigs(**kwargs)
    assert caught.value.config == config
    assert config in str(caught.value)


def test_boundaries_are_accepted():
    c = AssignmentConfigs(
        acceptable_recovery_lag=0,
        max_warmup_replicas=1,
        probing_rebalance_interval_ms=60_000,
        rack_aware_assignment_tags=["a", "b", "c", "d", "e"],
        rack_aware_traffic_cost=0,
        rack_aware_non_overlap_cost=0,
        rack_aware_assignment_strategy="balance_subtopology",
    )
    assert c.rack_aware_assignment_tags == ("a", "b", "c", "d", "e")
    assert c.rack_aware_assignment_strategy is RackAwareStrategy.BALANCE_SUBTOPOLOGY
