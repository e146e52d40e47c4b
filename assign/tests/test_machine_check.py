"""The identical-machines rule of `sample --cluster` (machine_check.py) on
reference values: identical workers never flagged, a differing one flagged
and named only where a majority says which, and the references the model
backend really gives a worker (cluster._references)."""
from __future__ import annotations

import numpy as np
import pytest

from assign import cluster
from assign.backends.model import ModelBackend, load_params
from assign.machine_check import (FLOOR, MIN_REFERENCES, REFERENCES_AT_START, anderson_darling,
                                  differing_workers)
from assign.sampling import draws
from assign.topology import get_machine
from assign.workloads import Workload


def model_references(seed: int, workers: int, per_worker: int, scale: dict[int, float] | None = None
                     ) -> dict[str, list[float]]:
    """References of `workers` workers as cluster._references measures them with the
    model backend (each worker taking chunks of 4096 draws in turn); worker k's
    base costs times scale[k] (a different machine)."""
    topo = get_machine("ultrasparc-t2")
    wl = Workload("ipfwd-mem")
    out = {}
    for k in range(workers):
        params = load_params(wl.name)
        if scale and k in scale:
            params = type(params)(params.base_ns * scale[k], params.demand, params.sensitivity, params.residual,
                                  params.comm_ns, params.noise_rel_sd)
        w = cluster._Worker(topo, ModelBackend(topo, wl, params, seed=seed),
                            draws(seed, 0, 1, wl.n_tasks, topo.n_contexts))
        rows = []
        chunk = k
        while len(rows) < per_worker:
            rows += cluster._references(w, 4096 * chunk, REFERENCES_AT_START + w.draws // 50)
            w.draws += 4096
            chunk += workers
        out[f"tcp://10.0.0.{k}:1"] = [r[4] for r in rows[:per_worker]]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_identical_model_workers_are_never_flagged(seed: int) -> None:
    for n in (MIN_REFERENCES, 200):
        refs = model_references(seed, 3, n)
        assert len({v for r in refs.values() for v in r}) > 0.95 * 3 * n  # its own noise (some clipped at 3 sd)
        assert differing_workers(refs) == []


def test_a_model_worker_of_a_slower_machine_is_flagged_and_named() -> None:
    refs = model_references(1, 3, MIN_REFERENCES, scale={2: 1.05})
    got = differing_workers(refs)
    assert [v.worker for v in got] == ["tcp://10.0.0.2:1"] and not got[0].ambiguous
    assert "%" in got[0].reason() and got[0].median < got[0].others_median


def test_noise_alone_never_flags_identical_workers_seeds() -> None:
    """Normal and heavy-tailed noise, no floor to hide behind (references 1000 +- 3
    against a 1% floor of 10: the noise factor decides), 1200 judgements, seeded."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        for workers in (2, 3):
            x = rng.standard_normal((workers, MIN_REFERENCES)) * 3.0
            t = rng.standard_t(3, (workers, MIN_REFERENCES)) * 3.0
            assert differing_workers({str(i): 1000 + x[i] for i in range(workers)}) == []
            assert differing_workers({str(i): 1000 + t[i] for i in range(workers)}) == []


def test_a_shift_beyond_the_noise_is_flagged_below_the_floor_is_not() -> None:
    rng = np.random.default_rng(3)
    refs = {str(i): list(1000 + rng.standard_normal(MIN_REFERENCES)) for i in range(4)}
    refs["3"] = [v + 60 for v in refs["3"]]  # 6% off, 60 noise sds
    assert [v.worker for v in differing_workers(refs)] == ["3"]
    exact = {str(i): [1000.0] * MIN_REFERENCES for i in range(3)}  # no noise at all: the floor decides
    exact["2"] = [1000.0 * (1 + FLOOR / 2)] * MIN_REFERENCES
    assert differing_workers(exact) == []
    exact["2"] = [1000.0 * (1 + 2 * FLOOR)] * MIN_REFERENCES
    assert [v.worker for v in differing_workers(exact)] == ["2"]


def test_too_few_references_are_not_judged_and_flagged_workers_are_left_out() -> None:
    refs = {"a": [1000.0] * MIN_REFERENCES, "b": [1000.0] * MIN_REFERENCES, "c": [500.0] * (MIN_REFERENCES - 1)}
    assert differing_workers(refs) == []
    refs["c"].append(500.0)
    assert [v.worker for v in differing_workers(refs)] == ["c"]
    assert differing_workers(refs, flagged={"c"}) == []


def test_the_odd_worker_is_flagged_even_when_it_holds_most_references() -> None:
    """Seen in CI: the slower worker had 91 references and the two others 10 each; with the
    others' values pooled, its references set their median and an identical worker was
    flagged first (then the remaining pair was ambiguous and the sample stopped)."""
    rng = np.random.default_rng(5)
    refs = {"0": list(5.80e6 + 1e3 * rng.standard_normal(MIN_REFERENCES)),
            "1": list(5.30e6 + 1e3 * rng.standard_normal(91)),
            "2": list(5.80e6 + 1e3 * rng.standard_normal(MIN_REFERENCES))}
    got = differing_workers(refs)
    assert [v.worker for v in got] == ["1"] and not got[0].ambiguous


def test_two_workers_that_disagree_are_both_named_unless_a_third_is_coming() -> None:
    refs = {"a": [1000.0] * MIN_REFERENCES, "b": [900.0] * MIN_REFERENCES}
    assert differing_workers(refs, more_coming=lambda judged: judged < 3) == []
    got = differing_workers(refs)
    assert sorted(v.worker for v in got) == ["a", "b"] and all(v.ambiguous for v in got)
    assert "cannot be told" in got[0].reason()


def test_anderson_darling_on_worker_values() -> None:
    rng = np.random.default_rng(5)
    same = anderson_darling({"a": rng.normal(100, 5, 1000), "b": rng.normal(100, 5, 1000)})
    apart = anderson_darling({"a": rng.normal(100, 5, 1000), "b": rng.normal(92, 5, 1000)})
    assert same is not None and apart is not None and same.workers == 2
    assert apart.pvalue <= 0.001 < 0.01 < same.pvalue and "floor" in apart.note
    assert anderson_darling({"a": [1.0, 2.0]}) is None
