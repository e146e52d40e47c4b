"""Exact counting of distinct assignments, against the paper, Burnside's
lemma, and brute-force enumeration with canonicalisation."""
from __future__ import annotations

from fractions import Fraction
from itertools import permutations
from math import factorial, perm

import pytest
from cli_helpers import run_assign

from assign.counting import canonical_assignment, count_assignments, raw_placements
from assign.enumeration import representatives
from assign.topology import Node, Topology, get_machine


@pytest.fixture(scope="module")
def t2() -> Topology:
    return get_machine("ultrasparc-t2")


def _tree(spec) -> Node:
    """('Core', [...]) / 'PU' -> Node, for hand-made (heterogeneous) trees."""
    if spec == "PU":
        return Node("PU")
    t, kids = spec
    return Node(t, None, [_tree(k) for k in kids])


def _number_pus(root: Node) -> Node:
    i = 0

    def walk(n: Node) -> None:
        nonlocal i
        if n.is_pu:
            n.os_index = i
            i += 1
        for c in n.children:
            walk(c)

    walk(root)
    return root


SMALL = {
    "pack:2 core:2 pu:2": None,
    "core:2 group:2 pu:2": None,
    "pack:1 core:3 pu:2": None,
    # heterogeneous: a 3-context core beside two 2-context cores, and a lone context
    "hetero": ("Machine", [("Core", ["PU", "PU", "PU"]), ("Core", ["PU", "PU"]), ("Core", ["PU", "PU"]), "PU"]),
}


def _small(name: str) -> Topology:
    spec = SMALL[name]
    if spec is None:
        return get_machine(topology=name)
    return Topology(name, name, _number_pus(_tree(spec)))


def _brute_force_orbits(topo: Topology, tasks: int) -> dict[tuple, int]:
    """canonical form -> number of raw placements, over all injective maps."""
    orbits: dict[tuple, int] = {}
    for ctx in permutations(range(topo.n_contexts), tasks):
        key = canonical_assignment(topo.root, {c: t for t, c in enumerate(ctx)})
        orbits[key] = orbits.get(key, 0) + 1
    return orbits


def test_paper_table1_small_workloads(t2):
    # Table 1 of the paper: 3 tasks -> 11 assignments, 6 tasks -> 1,526.
    assert count_assignments(t2, 3) == 11
    assert count_assignments(t2, 6) == 1526
    # 15 tasks: "600 x 10^9"; 60 tasks: "550 x 10^56" (rounded in the paper)
    assert 600e9 <= count_assignments(t2, 15) < 601e9
    assert 549e56 <= count_assignments(t2, 60) < 553e56


def test_t2_agrees_with_burnside(t2):
    """Independent method: orbits = mean over the automorphism group of the
    injective maps it fixes, P(fixed contexts, T); the fixed-point count of
    a random automorphism of S8 wr (S2 wr S4) is built level by level."""
    def fixed_points_of_random_perm(k: int) -> dict[int, Fraction]:
        return {m: Fraction(1, factorial(m)) * sum(Fraction((-1) ** i, factorial(i)) for i in range(k - m + 1))
                for m in range(k + 1)}

    def level(k: int, child: dict[int, Fraction]) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for m, p in fixed_points_of_random_perm(k).items():
            dist = {0: Fraction(1)}
            for _ in range(m):
                nxt: dict[int, Fraction] = {}
                for a, pa in dist.items():
                    for b, pb in child.items():
                        nxt[a + b] = nxt.get(a + b, 0) + pa * pb
                dist = nxt
            for x, q in dist.items():
                out[x] = out.get(x, 0) + p * q
        return out

    chip = level(8, level(2, level(4, {1: Fraction(1)})))
    for tasks in range(0, 65):
        burnside = sum(p * perm(f, tasks) for f, p in chip.items())
        assert burnside.denominator == 1
        assert count_assignments(t2, tasks) == burnside, tasks


@pytest.mark.parametrize("name", list(SMALL))
def test_count_matches_brute_force(name):
    topo = _small(name)
    for tasks in range(0, min(5, topo.n_contexts) + 1):
        orbits = _brute_force_orbits(topo, tasks)
        assert count_assignments(topo, tasks) == len(orbits), (name, tasks)
        assert sum(orbits.values()) == raw_placements(topo, tasks)


@pytest.mark.parametrize("name", list(SMALL))
def test_enumerate_gives_each_orbit_once_with_its_size(name):
    topo = _small(name)
    for tasks in range(1, min(4, topo.n_contexts) + 1):
        reps, mults = representatives(topo, tasks)
        brute = _brute_force_orbits(topo, tasks)
        keys = [canonical_assignment(topo.root, {c: t for t, c in enumerate(r)}) for r in reps]
        assert len(set(keys)) == len(keys) == count_assignments(topo, tasks)
        assert {k: m for k, m in zip(keys, mults)} == brute
        for r in reps:
            assert len(set(r)) == tasks  # one task per context


def test_enumerate_identity_on_t2(t2):
    reps, mults = representatives(t2, 6)
    assert len(reps) == count_assignments(t2, 6) == 1526
    assert sum(mults) == raw_placements(t2, 6) == perm(64, 6)


def test_more_tasks_than_contexts_counts_zero(t2):
    assert count_assignments(t2, 65) == 0


def test_cli_count_prints_the_integer_first(tmp_path):
    r = run_assign("count", "--machine", "ultrasparc-t2", "--tasks", "24")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first == str(count_assignments(get_machine("ultrasparc-t2"), 24))
    r = run_assign("count", "--topology", "pack:2 core:2 pu:2", "--tasks", "3")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == str(count_assignments(_small("pack:2 core:2 pu:2"), 3))


def test_cli_count_refuses_too_many_tasks():
    r = run_assign("count", "--machine", "ultrasparc-t2", "--tasks", "65")
    assert r.returncode != 0
    assert "65" in r.stderr and "64" in r.stderr


@pytest.mark.parametrize("spec, tasks", [("pack:1 core:2 pu:2", 4), ("pack:2 core:2 pu:2", 5), ("pack:1 core:2 pu:1", 9)])
def test_colocated_count_and_orbit_keys_match_brute_force(spec, tasks):
    """With co-location every map tasks -> contexts is a raw placement; their classes under the
    tree's symmetries (orbit_keys) number what count_assignments says, and on injective maps the
    keys split them as canonical_assignment does."""
    import itertools

    import numpy as np

    from assign.counting import orbit_keys

    topo = get_machine(topology=spec)
    rows = np.array(list(itertools.product(range(topo.n_contexts), repeat=tasks)))
    keys = orbit_keys(topo, rows)
    assert len(rows) == raw_placements(topo, tasks, colocate=True)
    assert len(set(keys)) == count_assignments(topo, tasks, colocate=True)
    inj = [(tuple(r), k) for r, k in zip(rows.tolist(), keys) if len(set(r)) == tasks]
    if inj:
        canon = {tuple(r): canonical_assignment(topo.root, {c: t for t, c in enumerate(r)}) for r, _ in inj}
        by_key: dict = {}
        for r, k in inj:
            by_key.setdefault(k, set()).add(canon[r])
        assert all(len(v) == 1 for v in by_key.values())
        assert len(by_key) == count_assignments(topo, tasks)


@pytest.mark.parametrize("spec, tasks, colocate", [("ultrasparc-t2", 24, False), ("pack:2 core:4 pu:2", 9, False),
                                                   ("pack:1 core:1 pu:2", 5, True),
                                                   ("pack:2 core:3 group:2 pu:2", 7, False)])
def test_orbit_hashes_split_placements_exactly_as_orbit_keys_do(spec, tasks, colocate):
    """Two placements get the same two words iff they get the same canonical key, on every
    neighbourhood of a few random placements (the rows a search dedups)."""
    import numpy as np

    from assign.counting import orbit_hashes, orbit_keys
    from assign.search.space import Space

    topo = get_machine("ultrasparc-t2") if spec == "ultrasparc-t2" else get_machine(None, spec)
    sp = Space(topo, tasks, colocate)
    for seed in range(3):
        rows = sp.moves(sp.random(seed, 0, 1)[0])
        keys = orbit_keys(topo, rows)
        words = [tuple(w) for w in orbit_hashes(topo, rows).tolist()]
        by_key: dict = {}
        by_word: dict = {}
        for k, w in zip(keys, words):
            by_key.setdefault(k, set()).add(w)
            by_word.setdefault(w, set()).add(k)
        assert all(len(v) == 1 for v in by_key.values()) and all(len(v) == 1 for v in by_word.values())
        assert len(by_key) > 1
