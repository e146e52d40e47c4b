"""Placements measured in rounds, optionally bracketed by a reference
placement that tracks the machine's drift (calibrate and validate).

Why rounds: on a shared machine a placement measured back to back repeats
itself within a few percent while the machine drifts by tens of percent
over minutes, so repetitions in a row would hide the noise the model has to
live with.

Why a reference: the drift is the whole machine's (one round of ipfwd-l1 ran
every placement at a third of its rate for a minute), and no placement model
can predict it.  With a reference, every round goes ref, p1, ref, p2, ...,
pN, ref: placement j's measurement is scaled by a reference level over the
geometric mean of the two references around it.  The level is the median
reference of the calibration (validate reads it from the parameter file), so
that calibration and validation, run minutes apart, share one scale; without
one, this run's median reference.  What that
corrects is a change of the machine's level that the reference sees too;
the raw values are kept and reported beside the corrected ones.

A second, crossing reference (the same load with every instance split over
two contexts) measured beside the fused one after every placement corrects
what the fused one cannot see: on a virtual machine the cost of handing a
burst to another context moves by itself (the host moves the virtual CPUs
between one core's threads and two cores; characterize's handoff probe), and
a placement with an instance split over contexts moves with it.  Measured on
the development VM (2026-11-24, ipfwd-l1, 40 rounds): three split placements
varied by 35-43%; divided by the fused reference, 34-41%; by the crossing
one, 13-16%.  A placement then takes the crossing reference when any of its
instances is split (in a --packets window the slowest instance sets the
rate), the fused one when every instance is fused.  Both are measured after
every placement, fused first, so the fused one before a placement is two
turns from it and the crossing one one turn: each reference's value at the
placement's turn is interpolated geometrically by those distances (weights
1/3 and 2/3), which is exact for a drift that is geometric in time.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..backends.base import BackendError
from ..topology import Topology


def crossing_reference_placement(topo: Topology, max_instances: int) -> tuple[int, tuple] | None:
    """The fused reference's load with every hop between contexts: instance
    i's R and T on its context c_i, its P on c_i+1 (None on one context)."""
    k, ctx = reference_placement(topo, max_instances)
    if k < 2:
        return None
    cs = [ctx[3 * i] for i in range(k)]
    return k, tuple(x for i in range(k) for x in (cs[i], cs[(i + 1) % k], cs[i]))


def split(placement: tuple[int, tuple]) -> bool:
    """Whether an instance of the placement has its tasks on more than one context."""
    k, ctx = placement
    return any(len(set(ctx[3 * i:3 * i + 3])) > 1 for i in range(k))


def reference_placement(topo: Topology, max_instances: int) -> tuple[int, tuple]:
    """min(contexts, max_instances) instances, each with R, P and T on one
    context of its own, spread over the machine: every context it uses busy
    in its cheapest layout, so a slowdown of any of them shows."""
    n = topo.n_contexts
    k = min(n, max_instances)
    os_idx = [int(o) for o in topo.os_index]
    return k, tuple(os_idx[i * n // k] for i in range(k) for _ in range(3))


@dataclass
class Rounds:
    raw: list[list[float]]                 # per placement: its measurement in each round it was measured
    corrected: list[list[float]] | None    # the same, drift-corrected; None without a reference
    reference: list[float] = field(default_factory=list)  # every reference measurement, in order
    failed: dict[int, str] = field(default_factory=dict)  # placement index -> why it was never measured
    crossing_reference: list[float] = field(default_factory=list)  # the same, of the crossing one
    corrected_by: list[str] = field(default_factory=list)  # per placement: "fused" or "crossing" (with both)
    # with both references: every placement scaled by the fused one alone, as if that were the only one
    corrected_fused: list[list[float]] | None = None

    def medians(self, corrected: bool) -> list[float]:
        src = self.corrected if corrected and self.corrected is not None else self.raw
        return [float(np.median(v)) if v else float("nan") for v in src]


def measure_rounds(placements: list[tuple[int, tuple]], measure: Callable[[int, tuple], float], reps: int,
                   log: Callable[[str], None], what: str, reference: tuple[int, tuple] | None = None,
                   predicted=None, tolerate_failures: bool = False, level: float | None = None,
                   crossing: tuple[int, tuple] | None = None, crossing_level: float | None = None) -> Rounds:
    """Every placement once per round, `reps` rounds; with `reference`, that
    placement measured before the first and after every placement, and each
    value scaled to `level` (the reference's rate to scale to; default: the
    median of this run's references) over the references around it.  With
    `crossing` too (and `crossing_level`, likewise), the crossing reference
    is measured after the fused one each time, and a placement with an
    instance split over contexts is scaled by it instead.  A placement that
    fails is left out of that round (tolerate_failures) or stops the run
    (BackendError); a reference that fails stops the run: the values around
    it could not be corrected."""
    raw: list[list[float]] = [[] for _ in placements]
    brackets: list[list[tuple[float, float]]] = [[] for _ in placements]
    fused_brackets: list[list[tuple[float, float]]] = [[] for _ in placements]
    refs: list[float] = []
    xrefs: list[float] = []
    failed: dict[int, str] = {}
    if crossing is not None and reference is None:
        raise ValueError("a crossing reference goes with the fused one")

    def ref_now(ref: tuple[int, tuple], into: list[float]) -> float:
        k, ctx = ref
        try:
            v = measure(k, ctx)
        except BackendError as e:
            raise BackendError(f"reference placement ({k} instance(s) on {list(ctx)}) not measured: {e}") from None
        into.append(v)
        return v

    def refs_now() -> tuple[float, float | None]:
        f = ref_now(reference, refs)
        return f, ref_now(crossing, xrefs) if crossing is not None else None

    by = ["crossing" if crossing is not None and split(p) else "fused" for p in placements]
    for rnd in range(reps):
        rd = f", round {rnd + 1}/{reps}" if reps > 1 else ""
        before = refs_now() if reference is not None else None
        for j, (k, ctx) in enumerate(placements):
            try:
                v = measure(k, ctx)
            except BackendError as e:
                if not tolerate_failures:
                    raise
                failed.setdefault(j, str(e))
                log(f"{what} {j + 1}/{len(placements)}{rd}: {k} instance(s) on {list(ctx)}: not measured: {e}")
                continue
            raw[j].append(v)
            tail = f", {predicted[j]:,.0f} modelled" if predicted is not None else ""
            if reference is not None:
                after = refs_now()
                pick = 1 if by[j] == "crossing" else 0
                brackets[j].append((before[pick], after[pick]))
                fused_brackets[j].append((before[0], after[0]))
                tail += f"; reference {before[0]:,.0f} before, {after[0]:,.0f} after (measured)"
                if crossing is not None:
                    tail += (f", crossing {before[1]:,.0f} before, {after[1]:,.0f} after (measured; this "
                             f"placement takes the {by[j]} one)")
                before = after
            log(f"{what} {j + 1}/{len(placements)}{rd}: {k} instance(s) on {list(ctx)}: {v:,.0f} packets/s "
                f"measured{tail}")
    for j in range(len(placements)):
        if raw[j]:
            failed.pop(j, None)
    corrected = None
    if reference is not None:
        levels = {"fused": float(np.median(refs)) if level is None else level}
        if crossing is not None:
            levels["crossing"] = float(np.median(xrefs)) if crossing_level is None else crossing_level
        # the references' value at the placement's turn, interpolated geometrically: with both
        # references measured after every placement (fused, then crossing), the fused one before a
        # placement is two turns away and the one after is next to it, the crossing one the reverse
        w_before = {"fused": 1 / 3, "crossing": 2 / 3} if crossing is not None else {"fused": 0.5}
        corrected = [[v * levels[by[j]] / float(a ** w_before[by[j]] * b ** (1 - w_before[by[j]]))
                      for v, (a, b) in zip(raw[j], brackets[j])]
                     for j in range(len(placements))]
        if crossing is not None:
            wf = w_before["fused"]
            corrected_fused = [[v * levels["fused"] / float(a ** wf * b ** (1 - wf))
                                for v, (a, b) in zip(raw[j], fused_brackets[j])]
                               for j in range(len(placements))]
            return Rounds(raw, corrected, refs, failed, xrefs, by, corrected_fused)
    return Rounds(raw, corrected, refs, failed, xrefs, by if reference is not None else [])


def noise_of(reps: list[list[float]]) -> float | None:
    """Median over placements of the repetitions' coefficient of variation, in
    percent; None with one repetition each."""
    cvs = [float(np.std(v, ddof=1) / np.mean(v) * 100.0) for v in reps if len(v) > 1]
    return float(np.median(cvs)) if cvs else None


NOISE_FLOOR_SIMS = 2000


def noise_floor(reps: list[list[float]], sims: int = NOISE_FLOOR_SIMS, seed: int = 0) -> dict | None:
    """The errors a model exact for every placement would show from the
    rounds' noise alone (estimated): each placement's figure is the median of
    its rounds, drawn here as normal noise with that placement's own CV
    around its level; the median and p90 absolute error over placements, as
    validate computes them, medians over `sims` simulations.  A run whose
    floor is near the goal cannot tell a good model from a bad one.  None
    with one repetition each."""
    rounds = [np.asarray(v, dtype=float) for v in reps if len(v) > 1]
    if not rounds:
        return None
    rng = np.random.default_rng(seed)
    errs = np.empty((sims, len(rounds)))
    for i, v in enumerate(rounds):
        cv = np.std(v, ddof=1) / np.mean(v)
        med = np.median(1.0 + cv * rng.standard_normal((sims, v.size)), axis=1)
        errs[:, i] = np.abs(1.0 / med - 1.0) * 100.0  # modelled (exact: 1) vs measured, in percent
    return {"median_abs_err_pct": float(np.median(np.median(errs, axis=1))),
            "p90_abs_err_pct": float(np.median(np.percentile(errs, 90, axis=1))),
            "simulations": sims, "kind": "estimated"}
