"""characterize/rounds.py: placements measured in rounds, drift-corrected by
a reference placement measured around each one (no DPDK: a machine whose
level drifts is simulated)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assign.backends.base import BackendError
from assign.characterize.rounds import (crossing_reference_placement, measure_rounds, noise_floor, noise_of,
                                        reference_placement, split)
from assign.topology import get_machine

PLACEMENTS = [(1, (0, 0, 0)), (2, (0, 1, 1, 0, 1, 0)), (1, (1, 0, 1)), (3, (0,) * 9)]
REF = (2, (0, 0, 0, 1, 1, 1))


class DriftingMachine:
    """Each placement has a rate of its own; the machine's level multiplies
    every measurement and changes from one measurement to the next
    (geometrically: level(t) = exp(slope * t)), with a slump (a third of the
    rate) for a stretch of calls."""

    def __init__(self, slope: float, slump: range = range(0)):
        self.t = 0
        self.slope = slope
        self.slump = slump
        self.rate = {p: 1e6 * (i + 2) for i, p in enumerate(PLACEMENTS)} | {REF: 5e6}
        self.calls: list[tuple[int, tuple]] = []

    def level(self, t: int) -> float:
        return math.exp(self.slope * t) / (3.0 if t in self.slump else 1.0)

    def __call__(self, k: int, ctx: tuple) -> float:
        self.calls.append((k, ctx))
        v = self.rate[(k, ctx)] * self.level(self.t)
        self.t += 1
        return v


def test_reference_brackets_every_placement_and_removes_a_geometric_drift() -> None:
    m = DriftingMachine(slope=0.05)
    r = measure_rounds(PLACEMENTS, m, 3, lambda s: None, "p", REF)
    # ref, p1, ref, p2, ..., pN, ref in every round
    per_round = [REF] + [x for p in PLACEMENTS for x in (p, REF)]
    assert m.calls == per_round * 3
    assert len(r.reference) == 3 * (len(PLACEMENTS) + 1)
    # raw values follow the drift; corrected ones are each placement's own rate times the run's
    # median level (the geometric mean of the two references around t is exactly level(t))
    level = float(np.median(r.reference)) / m.rate[REF]
    for j, p in enumerate(PLACEMENTS):
        assert len(r.raw[j]) == 3 and len(set(r.raw[j])) == 3
        assert r.corrected[j] == pytest.approx([m.rate[p] * level] * 3, rel=1e-9)
    assert noise_of(r.raw) > 10.0 and noise_of(r.corrected) < 1e-6
    assert r.medians(corrected=True) == pytest.approx([m.rate[p] * level for p in PLACEMENTS], rel=1e-9)
    assert r.medians(corrected=False) == [float(np.median(v)) for v in r.raw]


def test_values_are_scaled_to_a_level_given_from_elsewhere() -> None:
    # validate scales to the calibration's median reference: both runs on one scale
    m = DriftingMachine(slope=0.02)
    r = measure_rounds(PLACEMENTS, m, 2, lambda s: None, "p", REF, level=7e6)
    for j, p in enumerate(PLACEMENTS):
        assert r.corrected[j] == pytest.approx([m.rate[p] * 7e6 / m.rate[REF]] * 2, rel=1e-9)


def test_a_slump_of_the_whole_machine_is_taken_out_of_the_placements_inside_it() -> None:
    # calls 11-13 of the second round: the reference before, the placement, the reference after
    m = DriftingMachine(slope=0.0, slump=range(11, 14))
    r = measure_rounds(PLACEMENTS, m, 2, lambda s: None, "p", REF)
    hit = [j for j in range(len(PLACEMENTS)) if len(set(r.raw[j])) == 2]
    assert len(hit) == 1
    j = hit[0]
    assert min(r.raw[j]) == pytest.approx(m.rate[PLACEMENTS[j]] / 3)
    assert r.corrected[j] == pytest.approx([m.rate[PLACEMENTS[j]]] * 2)


def test_without_a_reference_values_are_kept_as_measured() -> None:
    m = DriftingMachine(slope=0.05)
    lines: list[str] = []
    r = measure_rounds(PLACEMENTS, m, 2, lines.append, "placement", None)
    assert r.corrected is None and r.reference == []
    assert m.calls == PLACEMENTS * 2
    assert r.medians(corrected=True) == r.medians(corrected=False)
    assert len(lines) == 2 * len(PLACEMENTS) and all("measured" in s for s in lines)


def test_failures_are_left_out_or_stop_the_run_and_a_failed_reference_always_stops_it() -> None:
    m = DriftingMachine(slope=0.0)

    def flaky(k: int, ctx: tuple) -> float:
        if (k, ctx) == PLACEMENTS[1]:
            raise BackendError("starved")
        return m(k, ctx)

    r = measure_rounds(PLACEMENTS, flaky, 2, lambda s: None, "p", REF, tolerate_failures=True)
    assert r.raw[1] == [] and r.corrected[1] == [] and r.failed == {1: "starved"}
    assert all(len(r.raw[j]) == 2 for j in (0, 2, 3))
    with pytest.raises(BackendError, match="starved"):
        measure_rounds(PLACEMENTS, flaky, 2, lambda s: None, "p", REF)

    def ref_fails(k: int, ctx: tuple) -> float:
        if (k, ctx) == REF and m.t > 3:
            raise BackendError("port down")
        return m(k, ctx)

    with pytest.raises(BackendError, match=r"reference placement \(2 instance\(s\) on \[0, 0, 0, 1, 1, 1\]\)"):
        measure_rounds(PLACEMENTS, ref_fails, 2, lambda s: None, "p", REF, tolerate_failures=True)


def test_the_reference_is_one_fused_instance_per_context_up_to_four() -> None:
    for topo in (get_machine("local"), get_machine("ultrasparc-t2")):
        check_reference(topo)


def check_reference(topo) -> None:
    k, ctx = reference_placement(topo, 4)
    assert k == min(topo.n_contexts, 4) and len(ctx) == 3 * k
    inst = [ctx[3 * i:3 * i + 3] for i in range(k)]
    assert all(len(set(x)) == 1 for x in inst)          # R, P and T of each on one context
    assert len({x[0] for x in inst}) == k                # every instance on a context of its own
    assert {x[0] for x in inst} <= {int(o) for o in topo.os_index}


XREF = (2, (0, 1, 0, 1, 0, 1))


class HandoffMachine(DriftingMachine):
    """A machine whose level drifts and whose handoff between contexts moves
    on its own: a placement with a split instance (and the crossing
    reference) runs at handoff(t) on top of the level; fused ones do not."""

    def __init__(self) -> None:
        super().__init__(slope=0.03)
        self.rate[XREF] = 3e6

    def handoff(self, t: int) -> float:
        # a step every 14 measurements (a round, with both references): for seconds, as the VM's did
        return 1.0 if (t // 14) % 2 == 0 else 0.3

    def __call__(self, k: int, ctx: tuple) -> float:
        v = super().__call__(k, ctx)
        return v * self.handoff(self.t - 1) if any(len(set(ctx[3 * i:3 * i + 3])) > 1 for i in range(k)) else v


def test_a_crossing_reference_corrects_the_placements_with_a_split_instance() -> None:
    m = HandoffMachine()
    r = measure_rounds(PLACEMENTS, m, 3, lambda s: None, "p", REF, crossing=XREF, level=5e6, crossing_level=3e6)
    # ref, xref, then p, ref, xref for every placement, in every round
    assert m.calls == ([REF, XREF] + [x for p in PLACEMENTS for x in (p, REF, XREF)]) * 3
    assert len(r.reference) == len(r.crossing_reference) == 3 * (len(PLACEMENTS) + 1)
    assert r.corrected_by == ["fused", "crossing", "crossing", "fused"]
    # the level drifts geometrically and the handoff holds through a round, so the references around a
    # measurement saw what it saw: every corrected value is the placement's own rate
    assert noise_of(r.raw) > 10.0
    for j, p in enumerate(PLACEMENTS):
        assert r.corrected[j] == pytest.approx([m.rate[p]] * 3, rel=1e-9)
    # the fused reference alone does not see the handoff: the split placements keep its steps
    fused_only = measure_rounds(PLACEMENTS, HandoffMachine(), 3, lambda s: None, "p", REF, level=5e6)
    assert noise_of([fused_only.corrected[j] for j in (1, 2)]) > 10.0
    assert fused_only.corrected_fused is None
    # the same rounds read with the fused reference alone (validate prints every read): the fused
    # placements as corrected, the split ones keeping the handoff's steps
    for j in (0, 3):
        assert r.corrected_fused[j] == pytest.approx(r.corrected[j], rel=1e-12)
    assert noise_of([r.corrected_fused[j] for j in (1, 2)]) > 10.0
    with pytest.raises(ValueError, match="goes with the fused one"):
        measure_rounds(PLACEMENTS, m, 1, lambda s: None, "p", None, crossing=XREF)


def test_the_crossing_reference_splits_every_instance_of_the_fused_one() -> None:
    for topo in (get_machine("local"), get_machine("ultrasparc-t2")):
        k, ctx = reference_placement(topo, 4)
        x = crossing_reference_placement(topo, 4)
        if topo.n_contexts < 2:
            assert x is None
            continue
        xk, xctx = x
        assert xk == k and sorted(xctx) == sorted(ctx)     # the same load, the same contexts
        assert all(len(set(xctx[3 * i:3 * i + 3])) == 2 for i in range(k))  # R and T on one, P on the next
        assert split(x) and not split((k, ctx))


def test_noise_floor_of_steady_rounds_is_zero() -> None:
    f = noise_floor([[5e6, 5e6, 5e6], [7e6, 7e6, 7e6]])
    assert f is not None and f["median_abs_err_pct"] == 0.0 and f["p90_abs_err_pct"] == 0.0
    assert f["kind"] == "estimated"
    assert noise_floor([[5e6], [7e6]]) is None  # one round each: no spread to read


def test_noise_floor_matches_the_median_of_three_normal_rounds() -> None:
    """Rounds with a CV of exactly 5%: the median of 3 normal draws has a standard deviation
    of 0.670 sigma, so an exact model's absolute errors have a median of 0.6745 * 0.670 * 5%
    and a 90th percentile of 1.645 * 0.670 * 5% (the p90 of 40 placements, itself a median over
    simulations: within 10%)."""
    a = 0.05
    reps = [[(1 - a) * lvl, lvl, (1 + a) * lvl] for lvl in np.linspace(5e6, 20e6, 40)]
    f = noise_floor(reps, sims=4000)
    sd_median = 0.670 * a * 100
    assert f["median_abs_err_pct"] == pytest.approx(0.6745 * sd_median, rel=0.10)
    assert f["p90_abs_err_pct"] == pytest.approx(1.645 * sd_median, rel=0.10)
    assert noise_floor(reps, sims=4000) == f  # seeded: the same rounds give the same floor
