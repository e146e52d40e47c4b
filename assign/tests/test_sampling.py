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


def test_a_draw_is_the_same_from_any_block_boundary() -> None:
    """Draws come in blocks of BLOCK from one generator each: a range that
    straddles blocks, and one draw alone, are what the whole sequence says."""
    from assign.sampling import BLOCK, normals

    whole = draws(seed=9, first=0, count=2 * BLOCK + 10, n_tasks=24, n_contexts=64)
    for first, count in ((BLOCK - 3, 7), (2 * BLOCK, 10), (5, BLOCK)):
        assert np.array_equal(draws(9, first, count, 24, 64), whole[first:first + count])
    assert np.array_equal(draw(9, BLOCK + 1, 24, 64), whole[BLOCK + 1])
    z = normals(9, np.arange(2 * BLOCK))
    assert np.array_equal(normals(9, np.array([BLOCK + 1, 3, 10 ** 9])[:2]), z[[BLOCK + 1, 3]])
    far = normals(9, np.array([3, 10 ** 9]))  # scattered indices: block by block, same values
    assert far[0] == z[3] and far[1] == normals(9, np.array([10 ** 9]))[0]


def test_every_draw_is_injective_and_uniform_per_task() -> None:
    """Without co-location no context repeats within a draw, and each task's
    context is uniform over the 64 (chi-square over 20000 draws)."""
    d = draws(seed=12, first=0, count=20000, n_tasks=24, n_contexts=64)
    srt = np.sort(d, axis=1)
    assert not (srt[:, 1:] == srt[:, :-1]).any()
    for t in (0, 11, 23):
        assert chisquare(np.bincount(d[:, t], minlength=64))[1] > 0.001
