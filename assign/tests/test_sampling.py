"""iid sampling: uniform over raw placements, reproducible per draw."""
from __future__ import annotations

from itertools import permutations, product

import numpy as np
from scipy.stats import chisquare

from assign.counting import canonical_assignment
from assign.enumeration import representatives
from assign.sampling import draw, draws
from assign.topology import get_machine

N_DRAWS = 12000


def test_uniform_over_raw_placements():
    """Chi-square over all 4*3*2 = 24 injective maps of 3 tasks on 4 contexts."""
    cells = {p: i for i, p in enumerate(permutations(range(4), 3))}
    counts = np.zeros(len(cells))
    for row in draws(seed=11, first=0, count=N_DRAWS, n_tasks=3, n_contexts=4):
        counts[cells[tuple(int(x) for x in row)]] += 1
    stat, p = chisquare(counts)
    print(f"chi-square over 24 raw placements: stat {stat:.1f}, p {p:.3f}")
    assert p > 0.001
    assert counts.min() > 0


def test_orbits_drawn_in_proportion_to_their_multiplicity():
    """On a topology with symmetry the orbit frequencies follow multiplicity
    (what makes the sample iid over raw placements, not over orbits)."""
    topo = get_machine(topology="core:2 group:2 pu:2")
    reps, mults = representatives(topo, 3)
    key_of = {canonical_assignment(topo.root, {c: t for t, c in enumerate(r)}): i for i, r in enumerate(reps)}
    counts = np.zeros(len(reps))
    for row in draws(seed=5, first=0, count=N_DRAWS, n_tasks=3, n_contexts=topo.n_contexts):
        counts[key_of[canonical_assignment(topo.root, {int(c): t for t, c in enumerate(row)})]] += 1
    expected = np.array(mults, dtype=float) / sum(mults) * N_DRAWS
    stat, p = chisquare(counts, expected)
    print(f"chi-square over {len(reps)} orbits: stat {stat:.1f}, p {p:.3f}")
    assert p > 0.001


def test_colocation_keeps_collisions_uniform():
    cells = {p: i for i, p in enumerate(product(range(3), repeat=2))}
    counts = np.zeros(len(cells))
    for row in draws(seed=3, first=0, count=9000, n_tasks=2, n_contexts=3, allow_colocate=True):
        counts[cells[tuple(int(x) for x in row)]] += 1
    assert counts[cells[(1, 1)]] > 0  # collisions are kept
    assert chisquare(counts)[1] > 0.001


def test_draw_depends_only_on_seed_and_index():
    batch = draws(seed=7, first=0, count=50, n_tasks=24, n_contexts=64)
    again = draws(seed=7, first=20, count=30, n_tasks=24, n_contexts=64)
    assert np.array_equal(batch[20:], again)
    assert np.array_equal(batch[33], draw(7, 33, 24, 64))
    assert not np.array_equal(batch, draws(seed=8, first=0, count=50, n_tasks=24, n_contexts=64))
    for row in batch:
        assert len(set(row.tolist())) == 24


def test_collision_check_agrees_with_sorting():
    from assign.sampling import _collision_free

    rng = np.random.default_rng(0)
    for contexts, tasks in ((64, 24), (64, 2), (100, 30), (4, 3)):
        cand = rng.integers(0, contexts, size=(3000, tasks))
        srt = np.sort(cand, axis=1)
        assert (_collision_free(cand, contexts) == ~(srt[:, 1:] == srt[:, :-1]).any(axis=1)).all()
