"""What a searcher is: something that spends a ledger's budget on placements
and says how it ended.

A searcher has a `name`, a one-line `describe`, and `search(ledger, rng,
starts, report)`: it measures through the ledger (which holds everything it
learns), may start from `starts` (the run's leading placements), and fills
`report` as it goes; `run` calls it and ends it when the budget is spent.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .ledger import Ledger, Spent


@dataclass
class Report:
    """How a search ended.  `converged`: it stopped by its own rule, not by its budget:
    no neighbour of its final placement is better by more than `resolution` (a share of that
    placement's mean) at its test's confidence; None where the searcher has no such rule."""

    sampler: str
    converged: bool | None = None
    resolution: float | None = None
    final: tuple | None = None               # key of the placement the search ended on
    steps: int = 0                           # moves to a better placement
    spent: int = 0
    notes: list[str] = field(default_factory=list)
    trace: list[tuple[int, float]] = field(default_factory=list)   # (spent, incumbent mean) after each move

    def to_dict(self) -> dict[str, Any]:
        return {"sampler": self.sampler, "converged": self.converged, "resolution": self.resolution,
                "steps": self.steps, "spent": self.spent, "notes": self.notes}


class Searcher(Protocol):
    name: str

    def describe(self) -> str:
        """What it does, in one line (printed with its budget)."""
        ...

    def search(self, ledger: Ledger, rng: np.random.Generator, starts: Sequence[np.ndarray],
               report: Report) -> None:
        ...


def run(searcher: Searcher, ledger: Ledger, rng: np.random.Generator,
        starts: Sequence[np.ndarray] = ()) -> Report:
    """Run a searcher until it stops by its own rule or its budget is spent."""
    report = Report(searcher.name)
    try:
        searcher.search(ledger, rng, starts, report)
    except Spent:
        report.notes.append(f"the budget of {ledger.budget:,} measurements is spent")
    report.spent = ledger.spent
    return report
