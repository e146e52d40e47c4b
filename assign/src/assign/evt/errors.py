"""The one exception the estimator raises for input it cannot work with."""
from __future__ import annotations


class EstimateError(ValueError):
    """Bad input to the estimator (empty, too small, constant, NaN/inf,
    negative, a threshold that leaves too few exceedances). The message names
    the problem and the offending value."""
