"""The package's shape (issue 9): no import cycles, one way to add a command."""
from __future__ import annotations

import argparse
import importlib
import pkgutil

import grimp
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import assign.commands
from assign.cli import build_parser


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others
    (strongly connected components of the import graph with more than one
    module, or a module importing itself)."""
    mods = sorted(graph.modules)
    index = {m: i for i, m in enumerate(mods)}
    edges = [(index[m], index[d]) for m in mods for d in graph.find_modules_directly_imported_by(m) if d in index]
    rows, cols = zip(*edges) if edges else ((), ())
    adj = csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(mods), len(mods)))
    n, label = connected_components(adj, directed=True, connection="strong")
    groups = [[mods[i] for i in np.flatnonzero(label == k)] for k in range(n)]
    return [g for g in groups if len(g) > 1] + [[m] for m, i in index.items() if (i, i) in set(edges)]


def test_the_cycle_check_finds_a_cycle() -> None:
    """The check itself: a graph with a cycle is caught (so a pass means something)."""
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.e", "p.e")):
        graph.add_import(importer=a, imported=b)
    assert sorted(import_cycles(graph)) == [["p.a", "p.b", "p.c"], ["p.e"]]


def test_assign_has_no_import_cycle() -> None:
    # every import counts: module level, inside functions, and under TYPE_CHECKING
    assert import_cycles(grimp.build_graph("assign", exclude_type_checking_imports=False)) == []


def test_every_command_is_one_module_with_register_and_run() -> None:
    found = {m.name for m in pkgutil.iter_modules(assign.commands.__path__) if not m.name.startswith("_")}
    assert found == set(assign.commands.NAMES)
    for name in assign.commands.NAMES:
        mod = importlib.import_module(f"assign.commands.{name}")
        assert callable(mod.register) and callable(mod.run)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(assign.commands.NAMES)
    for name, p in sub.choices.items():
        assert p.get_default("handler") is importlib.import_module(f"assign.commands.{name}").run


def test_compare_is_baselines_measured() -> None:
    p = build_parser()
    a = p.parse_args(["compare", "--db", "x.db", "--reps", "2"])
    b = p.parse_args(["baselines", "--measured", "--db", "x.db", "--reps", "2"])
    assert a.reps == b.reps == 2 and b.measured
    assert a.handler.__module__ == "assign.commands.compare"
    from assign.commands import baselines, compare
    assert compare.run_measured is baselines.run_measured
