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
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..backends.base import BackendError
from ..topology import Topology


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

    def medians(self, corrected: bool) -> list[float]:
        src = self.corrected if corrected and self.corrected is not None else self.raw
        return [float(np.median(v)) if v else float("nan") for v in src]


def measure_rounds(placements: list[tuple[int, tuple]], measure: Callable[[int, tuple], float], reps: int,
                   log: Callable[[str], None], what: str, reference: tuple[int, tuple] | None = None,
                   predicted=None, tolerate_failures: bool = False, level: float | None = None) -> Rounds:
    """Every placement once per round, `reps` rounds; with `reference`, that
    placement measured before the first and after every placement, and each
    value scaled to `level` (the reference's rate to scale to; default: the
    median of this run's references) over the references around it.  A
    placement that fails is left out of that round (tolerate_failures) or
    stops the run (BackendError); a reference that fails stops the run: the
    values around it could not be corrected."""
    raw: list[list[float]] = [[] for _ in placements]
    brackets: list[list[tuple[float, float]]] = [[] for _ in placements]
    refs: list[float] = []
    failed: dict[int, str] = {}

    def ref_now() -> float:
        k, ctx = reference
        try:
            v = measure(k, ctx)
        except BackendError as e:
            raise BackendError(f"reference placement ({k} instance(s) on {list(ctx)}) not measured: {e}") from None
        refs.append(v)
        return v

    for rnd in range(reps):
        rd = f", round {rnd + 1}/{reps}" if reps > 1 else ""
        before = ref_now() if reference is not None else None
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
                after = ref_now()
                brackets[j].append((before, after))
                tail += f"; reference {before:,.0f} before, {after:,.0f} after (measured)"
                before = after
            log(f"{what} {j + 1}/{len(placements)}{rd}: {k} instance(s) on {list(ctx)}: {v:,.0f} packets/s "
                f"measured{tail}")
    for j in range(len(placements)):
        if raw[j]:
            failed.pop(j, None)
    corrected = None
    if reference is not None:
        level = float(np.median(refs)) if level is None else level
        corrected = [[v * level / float(np.sqrt(a * b)) for v, (a, b) in zip(raw[j], brackets[j])]
                     for j in range(len(placements))]
    return Rounds(raw, corrected, refs, failed)


def noise_of(reps: list[list[float]]) -> float | None:
    """Median over placements of the repetitions' coefficient of variation, in
    percent; None with one repetition each."""
    cvs = [float(np.std(v, ddof=1) / np.mean(v) * 100.0) for v in reps if len(v) > 1]
    return float(np.median(cvs)) if cvs else None
