"""Independent refit with scipy.stats.genpareto (location fixed at 0) from a
method-of-moments start, to cross-check the closed-form profile MLE."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .profile import Exceedances, GpdFit, gpd_loglik


@dataclass(frozen=True)
class ScipyCheck:
    converged: bool        # finite result whose support holds every exceedance
    xi: float | None
    sigma: float | None    # data scale
    loglik: float | None   # data scale
    agrees: bool           # shape within 0.01 and scale within 1% of the MLE
    note: str

    def to_dict(self) -> dict:
        return dict(converged=self.converged, xi=self.xi, sigma=self.sigma,
                    loglik=self.loglik, agrees=self.agrees, note=self.note)


def moments_start(y: np.ndarray) -> tuple[float, float]:
    """Method-of-moments GPD estimate (Hosking and Wallis 1987): a good start."""
    m, v = float(y.mean()), float(y.var(ddof=1))
    ratio = m * m / v
    return 0.5 * (1.0 - ratio), 0.5 * m * (1.0 + ratio)


def scipy_refit(ex: Exceedances) -> tuple[float, float]:
    """scipy's genpareto MLE on the rescaled exceedances; returns (xi, sigma on
    the data scale). May raise or return nonsense: callers validate."""
    c0, s0 = moments_start(ex.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c, _, s = stats.genpareto.fit(ex.y, c0, floc=0.0, scale=s0)
    return float(c), float(s) * ex.scale


def cross_check(fit: GpdFit) -> ScipyCheck:
    ex = fit.ex
    try:
        xi, sigma = scipy_refit(ex)
    except Exception as exc:  # scipy's optimiser failing is a finding, not an error
        return ScipyCheck(False, None, None, None, False, f"scipy genpareto.fit failed: {exc}")
    y = ex.y * ex.scale
    ll = gpd_loglik(y, xi, sigma)
    if not (np.isfinite(xi) and np.isfinite(sigma) and np.isfinite(ll)):
        return ScipyCheck(False, xi, sigma, None, False,
                          "scipy's fit excludes the sample maximum from its support")
    agrees = abs(xi - fit.xi) <= 0.01 and abs(sigma - fit.sigma) <= 0.01 * fit.sigma
    if agrees:
        note = "scipy genpareto (floc=0, moments start) agrees"
    elif xi < -1.0:
        note = (f"scipy went to xi={xi:.3g} < -1, where the GPD likelihood is unbounded; "
                "the constrained fit is the meaningful one")
    elif ll < fit.loglik:
        note = f"scipy stopped at a lower likelihood ({ll:.6g} < {fit.loglik:.6g})"
    else:
        note = f"scipy found a different fit (xi={xi:.4g}, log-likelihood {ll:.6g})"
    return ScipyCheck(True, xi, sigma, ll, bool(agrees), note)
