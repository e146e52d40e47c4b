"""characterize's pressure point says what it saw: a co-runner that leaves a
role as fast or faster (ratio <= 1), or slower only within the noise of one
run, is no pressure, and then no pressure point is named."""
from __future__ import annotations

import pytest

from assign.characterize.harness import NOISE_FLOOR_PCT, pressure_point, role_noise_pct

NOISE = {"R": 2.0, "P": 2.0, "T": 2.0}


def chip(**ratios: float) -> dict[str, dict[str, float]]:
    return {"pu": {"R+P": 3.0, "R+mem": 5.0}, "chip": {k.replace("_", "+"): v for k, v in ratios.items()}}


def test_co_runners_that_make_the_roles_faster_are_no_pressure() -> None:
    # what characterize --workload stateful measured on the development VM: every ratio below 1
    sharing = chip(R_T=0.817, T_R=0.80, P_R=0.79, R_mem=0.84, P_mem=0.82, T_compute=0.81)
    point, scores, beyond = pressure_point(sharing, NOISE)
    assert point is None and beyond == {}
    assert scores["neighbours"] == pytest.approx((0.817 + 0.80 + 0.79) / 3)  # the ratios stay, as measured


def test_a_slowdown_within_the_noise_of_one_run_is_no_pressure() -> None:
    point, _, beyond = pressure_point(chip(R_P=1.015, P_mem=1.019, T_compute=0.99), NOISE)
    assert point is None and beyond == {}


def test_the_kind_that_slows_a_role_beyond_the_noise_is_named() -> None:
    # neighbours have the higher mean, but none of them beyond the noise: memory is the pressure
    sharing = chip(R_P=1.019, P_T=1.018, T_R=1.019, P_mem=1.03, R_mem=0.95, T_compute=1.0)
    point, scores, beyond = pressure_point(sharing, NOISE)
    assert scores["neighbours"] > scores["memory"]
    assert point == "memory" and beyond == {"memory": ["chip P+mem 1.030"]}
    # of two kinds beyond the noise, the one with the higher mean ratio
    point, _, beyond = pressure_point(chip(R_P=1.5, P_mem=1.2, T_compute=1.0), NOISE)
    assert point == "neighbours" and set(beyond) == {"neighbours", "memory"}


def test_each_role_is_judged_against_its_own_noise() -> None:
    point, _, _ = pressure_point(chip(P_mem=1.04), {"R": 2.0, "P": 5.0, "T": 2.0})
    assert point is None
    point, _, _ = pressure_point(chip(R_mem=1.04), {"R": 2.0, "P": 5.0, "T": 2.0})
    assert point == "memory"


def test_a_machine_with_one_context_has_its_context_as_the_pressure_point() -> None:
    assert pressure_point({"pu": {"R+P": 2.0}}, NOISE) == ("context", {}, {})


def test_the_noise_of_one_run_is_twice_the_spread_of_the_repetitions_alone() -> None:
    def rep(w: float, pps: float) -> dict:
        return {r: {"work": w, "pps": pps} for r in ("R", "P", "T")}
    steady = role_noise_pct([rep(100.0, 1e6), rep(100.0, 1e6), rep(100.0, 1e6)])
    assert steady == {"R": NOISE_FLOOR_PCT, "P": NOISE_FLOOR_PCT, "T": NOISE_FLOOR_PCT}
    moving = role_noise_pct([rep(100.0, 1e6), rep(110.0, 1e6), rep(90.0, 1e6)])
    assert moving["P"] == pytest.approx(2 * 10.0)  # sd 10 over mean 100: CV 10%
