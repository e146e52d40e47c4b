"""bench/ipfwd.py's split layouts: R+T on another core, and on the other thread
of P's core where the machine has SMT (bench/lib/split_contexts.py), read from a
sysfs tree built here for each machine shape."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "lib"))
from split_contexts import core_siblings, split_layouts  # noqa: E402


def sysfs(root: Path, siblings: dict[int, str]) -> Path:
    for cpu, text in siblings.items():
        d = root / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(text + "\n")
    return root


def test_two_single_thread_cores_give_the_another_core_layout_only(tmp_path: Path) -> None:
    root = sysfs(tmp_path, {0: "0", 1: "1"})
    assert split_layouts([0, 1], root) == (1, 0, [("another core", 0)])


def test_siblings_numbered_far_apart(tmp_path: Path) -> None:
    # 4 cores x 2 threads, thread k of core c is CPU c + 4k (how Linux usually numbers them)
    root = sysfs(tmp_path, {c: f"{c % 4},{c % 4 + 4}" for c in range(8)})
    p, main, layouts = split_layouts(list(range(8)), root)
    assert p == 1 and main == 0
    assert layouts == [("another core", 0), ("P's core", 5)]


def test_siblings_numbered_side_by_side(tmp_path: Path) -> None:
    # 2 cores x 2 threads, CPUs 0-1 one core, 2-3 the other (some firmware numbers them so): the first
    # allowed CPU is then P's sibling
    root = sysfs(tmp_path, {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3"})
    p, main, layouts = split_layouts([0, 1, 2, 3], root)
    assert (p, main) == (1, 0)
    assert layouts == [("another core", 2), ("P's core", 0)]


def test_only_one_core_allowed_gives_the_p_core_layout_only(tmp_path: Path) -> None:
    root = sysfs(tmp_path, {0: "0,4", 4: "0,4"})
    assert split_layouts([4, 0], root) == (4, 0, [("P's core", 0)])


def test_missing_topology_counts_each_cpu_as_its_own_core(tmp_path: Path) -> None:
    assert core_siblings(3, tmp_path) == {3}
    assert split_layouts([2, 3], tmp_path) == (3, 2, [("another core", 2)])


def test_one_context_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"1 allowed context\(s\): need at least 2"):
        split_layouts([0], tmp_path)


@pytest.mark.parametrize("text", ["x", "3-1", "1-", "-2", "0,a"])
def test_a_broken_cpu_list_is_refused_naming_the_file(tmp_path: Path, text: str) -> None:
    with pytest.raises(ValueError, match=r"cpu0/topology/thread_siblings_list: .* is not a CPU list"):
        core_siblings(0, sysfs(tmp_path, {0: text}))


def test_cpu_lists(tmp_path: Path) -> None:
    assert core_siblings(0, sysfs(tmp_path, {0: "0-3,8,10-11"})) == {0, 1, 2, 3, 8, 10, 11}


def test_bench_ipfwd_refuses_a_single_allowed_context(repo_dir: Path, build_dir: Path) -> None:
    cpu = min(os.sched_getaffinity(0))
    p = subprocess.run(["taskset", "-c", str(cpu), sys.executable, str(repo_dir / "bench" / "ipfwd.py"),
                        "--build", str(build_dir)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout
    assert "the CPUs this process may run on (its affinity; taskset sets it): 1 allowed context(s)" in p.stderr
