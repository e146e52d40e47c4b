"""`--sampler gp`: Optuna's Gaussian-process sampler over the Lehmer code.  It
needs PyTorch (several GB from PyPI with its CUDA libraries, so not installed
by tools/setup.sh): `pip install 'assign[gp]'`; without it the sampler is
refused before anything is measured."""
from __future__ import annotations

from .optuna_study import optimise


def available() -> str | None:
    """None when the sampler can run, else why not."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return ("--sampler gp needs PyTorch (Optuna's GPSampler is built on it; several GB from PyPI, not "
                "installed by tools/setup.sh): .venv/bin/pip install 'assign[gp]'")
    return None


class GPSearch:
    name = "gp"

    def describe(self) -> str:
        return "Optuna's Gaussian-process sampler over the placement's Lehmer code, one trial a measurement"

    def search(self, ledger, rng, starts, report) -> None:
        import optuna

        why = available()
        if why:
            raise ValueError(why)
        optimise(optuna.samplers.GPSampler(seed=int(rng.integers(2 ** 31))), ledger, starts[:10], report)
