"""The deconvolution's cells, computed in place and once per end point for a
profile over the shape (deconvolution._cells), against the plain form they
replace: the same numbers, to the last bit.  The log-likelihood sums them,
and numpy's sums peel a few elements to align their vector loop, so an
array's sum may differ in its last bit with where its memory lies: the
likelihood is held to 1e-12 of itself and the fit to its own tolerance."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from assign.evt import deconvolution as dc


def _plain_cells(lo, hi, u0, a, alpha, exp_scale=None, shared=False):
    # cells outermost, as _cells lays them out: (M, P, K)
    e = lo[None] + (hi - lo)[None] * dc._GRID[:, None, None]
    d = e - u0
    if exp_scale is None:
        aa, al = a[None, :, None], alpha[None, :, None]
        r = np.clip(1.0 - d / aa, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            log_s = al * np.log(r)
        s = np.exp(log_s)
        tail_int = aa / (al + 1.0) * (s * r)
    else:
        sc = exp_scale[None, :, None]
        log_s = -d / sc
        s = np.exp(log_s)
        tail_int = sc * s
    s0, s1 = s[:-1], s[1:]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mass = s0 * -np.expm1(log_s[1:] - log_s[:-1])
        mass = np.where(s0 > 0, mass, 0.0)
        d0, d1 = d[:-1], d[1:]
        mom = d0 * s0 - d1 * s1 + (tail_int[:-1] - tail_int[1:])
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


def _block_inputs(data: dc.TailSet, tau: np.ndarray, alpha: np.ndarray, exp_scale=None):
    """What _loglik_block hands _cells: the points' windows and q's window beside them."""
    x, sd, u0, t, s1 = data.xbar, data.sd, data.u0, data.t, data.sd1
    p, k, w = tau.size, data.k, dc.W
    if exp_scale is None:
        top = tau[:, None]
        h = np.minimum(sd[None, :] / 4.0, (tau - u0)[:, None] / 4.0)
        lo = np.clip(np.minimum(x - w * sd, top - h), u0, top)
        hi = np.clip(np.maximum(x + w * sd, u0 + h), u0, top)
        qhi = np.minimum(t + w * s1, top)
        qlo = np.minimum(max(t - w * s1, u0), qhi)
    else:
        lo = np.broadcast_to(np.maximum(x - w * sd, u0), (p, k))
        hi = np.broadcast_to(np.maximum(x + w * sd, u0 + sd / 4.0), (p, k))
        qlo, qhi = np.full((p, 1), max(t - w * s1, u0)), np.full((p, 1), t + w * s1)
    return np.concatenate([lo, qlo], axis=1), np.concatenate([hi, qhi], axis=1)


@pytest.mark.parametrize("atom", [False, True])
def test_cells_in_place_are_the_plain_cells(monkeypatch, atom: bool) -> None:
    data = _tail(4, atom)
    u0 = data.u0
    alphas = np.exp(np.linspace(0.0, np.log(2e4), 9))
    for tau in np.concatenate([np.linspace(0.3, 3.0, 12), [1.0, 40.0]]):
        taus = np.full(alphas.size, tau)
        lo, hi = _block_inputs(data, taus, alphas)
        for shared in (False, True):
            args = (lo[:1], hi[:1]) if shared else (lo, hi)
            new = [a.copy() for a in dc._cells(*args, u0, taus - u0, alphas, None, shared)]
            old = _plain_cells(*args, u0, taus - u0, alphas, None, shared)
            for a, b in zip(new, old):
                assert np.array_equal(a, b, equal_nan=True), (tau, shared)
    scales = np.geomspace(1e-3, 1e3, 7)
    lo, hi = _block_inputs(data, np.full(7, np.inf), np.full(7, np.inf), scales)
    new = [a.copy() for a in dc._cells(lo, hi, u0, np.full(7, np.inf), np.full(7, np.inf), scales)]
    old = _plain_cells(lo, hi, u0, np.full(7, np.inf), np.full(7, np.inf), scales)
    for a, b in zip(new, old):
        assert np.array_equal(a, b, equal_nan=True)
    # and the likelihood that sums them
    taus = np.concatenate([np.linspace(0.3, 3.0, 12), [1.0, 40.0]])
    new = [dc.loglik(data, taus[:, None], alphas[None, :]), dc.loglik(data, 1.2, 3.0),
           dc.loglik_exponential(data, scales)]
    monkeypatch.setattr(dc, "_cells", _plain_cells)
    old = [dc.loglik(data, taus[:, None], alphas[None, :]), dc.loglik(data, 1.2, 3.0),
           dc.loglik_exponential(data, scales)]
    for a, b in zip(new, old):
        assert np.array_equal(np.isfinite(a), np.isfinite(b))
        assert np.allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=1e-12, atol=0.0)


def test_the_fit_takes_the_same_path(monkeypatch) -> None:
    data = dataclasses.replace(_tail(5, False), atom=False)
    new = dc.fit(data)
    monkeypatch.setattr(dc, "_cells", _plain_cells)
    old = dc.fit(data)
    span = float(np.max(data.xbar + 2.0 * data.sd)) - data.u0
    for a, b in ((new.tau, old.tau), (new.ci_low, old.ci_low), (new.ci_high, old.ci_high)):
        assert a == pytest.approx(b, abs=2e-4 * span)  # the fit's tolerance: 1e-4 of the tail's width
    assert new.loglik == pytest.approx(old.loglik, abs=1e-9)
