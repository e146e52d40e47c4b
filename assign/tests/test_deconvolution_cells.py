"""The deconvolution's cells, computed in place and once per end point for a
profile over the shape (deconvolution._cells), against the plain form they
replace: the same numbers, to the last bit, so the fit takes the same path."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from assign.evt import deconvolution as dc


def _plain_cells(lo, hi, u0, a, alpha, exp_scale=None, shared=False):
    e = lo[..., None] + (hi - lo)[..., None] * dc._GRID
    d = e - u0
    if exp_scale is None:
        aa, al = a[:, None, None], alpha[:, None, None]
        r = np.clip(1.0 - d / aa, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            log_s = al * np.log(r)
        s = np.exp(log_s)
        tail_int = aa / (al + 1.0) * (s * r)
    else:
        sc = exp_scale[:, None, None]
        log_s = -d / sc
        s = np.exp(log_s)
        tail_int = sc * s
    s0, s1 = s[..., :-1], s[..., 1:]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mass = s0 * -np.expm1(log_s[..., 1:] - log_s[..., :-1])
        mass = np.where(s0 > 0, mass, 0.0)
        d0, d1 = d[..., :-1], d[..., 1:]
        mom = d0 * s0 - d1 * s1 + (tail_int[..., :-1] - tail_int[..., 1:])
        pos = np.where(mass > 1e-300, mom / np.where(mass > 1e-300, mass, 1.0), 0.5 * (d0 + d1))
        log_mass = np.log(mass)
    return log_mass, u0 + np.clip(pos, d0, d1)


def _tail(seed: int, atom: bool) -> dc.TailSet:
    rng = np.random.default_rng(seed)
    k, n = 250, 5000
    mu = 1.0 - rng.beta(1.0, 3.0, k) * 0.3
    m = rng.integers(1, 4, k)
    sd = 0.05 / np.sqrt(m)
    return dc.TailSet((mu + rng.normal(0.0, sd) - 0.8) / 0.2, sd / 0.2, 1.0, 0.05 / 0.2, n, atom)


@pytest.mark.parametrize("atom", [False, True])
def test_cells_in_place_are_the_plain_cells(monkeypatch, atom: bool) -> None:
    data = _tail(4, atom)
    taus = np.concatenate([np.linspace(0.3, 3.0, 12), [1.0, 40.0]])
    alphas = np.exp(np.linspace(0.0, np.log(2e4), 9))
    scales = np.geomspace(1e-3, 1e3, 7)
    new = [dc.loglik(data, taus[:, None], alphas[None, :]), dc.loglik(data, 1.2, 3.0),
           dc.loglik_exponential(data, scales)]
    monkeypatch.setattr(dc, "_cells", _plain_cells)
    old = [dc.loglik(data, taus[:, None], alphas[None, :]), dc.loglik(data, 1.2, 3.0),
           dc.loglik_exponential(data, scales)]
    for a, b in zip(new, old):
        assert np.array_equal(a, b)


def test_the_fit_takes_the_same_path(monkeypatch) -> None:
    data = dataclasses.replace(_tail(5, False), atom=False)
    new = dc.fit(data)
    monkeypatch.setattr(dc, "_cells", _plain_cells)
    old = dc.fit(data)
    assert (new.tau, new.ci_low, new.ci_high, new.alpha, new.loglik) == \
        (old.tau, old.ci_low, old.ci_high, old.alpha, old.loglik)
