"""Searchers: ways to spend measurements on placements, behind one
interface (base.py), one per file, each named by its `--sampler`:

  random     the paper's iid draws (random_draws.py)
  local      a local search that converges under noise (local.py)
  surrogate  that local search guided by a surrogate fitted to every
             measurement (surrogate.py): assign's default
  model      that local search guided by the performance model (model_guided.py)
  tpe, gp    Optuna's samplers over the Lehmer code (tpe.py, gp.py)
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .base import Report, Searcher, run
from .ledger import Entry, Ledger, Spent
from .space import Space

SAMPLERS = ("surrogate", "local", "random", "tpe", "gp", "model")
DEFAULT = "surrogate"


def make(name: str, predict: Callable[[np.ndarray], np.ndarray] | None = None) -> Searcher:
    """A searcher by its --sampler name (`model` needs the model's noise-free predict)."""
    if name == "surrogate":
        from .surrogate import SurrogateSearch
        return SurrogateSearch()
    if name == "local":
        from .local import LocalSearch
        return LocalSearch()
    if name == "random":
        from .random_draws import RandomSearch
        return RandomSearch()
    if name == "tpe":
        from .tpe import TPESearch
        return TPESearch()
    if name == "gp":
        from .gp import GPSearch, available
        why = available()
        if why:
            raise ValueError(why)
        return GPSearch()
    if name == "model":
        if predict is None:
            raise ValueError("--sampler model needs the model's parameters for this machine")
        from .model_guided import ModelGuidedSearch
        return ModelGuidedSearch(predict)
    raise ValueError(f"--sampler {name!r}: known samplers are {', '.join(SAMPLERS)}")


__all__ = ["DEFAULT", "Entry", "Ledger", "Report", "SAMPLERS", "Searcher", "Space", "Spent", "make", "run"]
