"""Extreme Value Theory estimate of the optimum of a sample of throughputs:
Peaks-Over-Threshold, GPD maximum likelihood, the upper performance bound and
its profile-likelihood interval. See assign/EVT.md.

    from assign.evt import estimate, Estimate, EstimateError
    from assign.evt import plots   # matplotlib helpers (imports matplotlib)
"""
from .errors import EstimateError
from .estimate import Estimate, estimate
from .threshold import MIN_EXCEEDANCES
from .validate import minimum_sample

__all__ = ["Estimate", "EstimateError", "MIN_EXCEEDANCES", "estimate", "minimum_sample"]
