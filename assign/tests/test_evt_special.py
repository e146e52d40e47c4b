"""The estimate's special functions without scipy (evt/special.py) against
scipy's, and the estimate command's imports: scipy stays out of it."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import special as sp

from assign.evt.special import chi2_isf, ndtr


def test_ndtr_is_scipys() -> None:
    x = np.concatenate([np.linspace(-12.0, 12.0, 4801), np.random.default_rng(1).normal(0.0, 4.0, 2000)])
    mine, ref = ndtr(x), sp.ndtr(x)
    assert np.all(np.abs(mine - ref) <= 1e-13 * ref)
    assert ndtr(np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 50, 99, 100, 101, 1000, 2821, 47178, 10 ** 6])
def test_chi2_isf_is_scipys_chdtri(df: int) -> None:
    for q in (0.001, 0.005, 0.025, 0.05, 0.5, 0.95, 0.975, 0.995, 0.999):
        assert chi2_isf(df, q) == pytest.approx(sp.chdtri(df, q), rel=1e-11)
    with pytest.raises(ValueError):
        chi2_isf(df, 1.0)


def test_the_estimate_command_imports_no_scipy(tmp_path) -> None:
    """scipy.special's import alone costs about what the whole `assign estimate` may (0.3 s, bench/assign.sh)."""
    db = tmp_path / "r.db"
    subprocess.run([sys.executable, "-m", "assign.cli", "sample", "--n", "600", "--workload", "ipfwd-mem",
                    "--machine", "ultrasparc-t2", "--backend", "model", "--noise", "0.02", "--db", str(db),
                    "--quiet"], check=True, capture_output=True)
    code = ("import sys\nfrom assign.cli import main\n"
            f"rc = main(['estimate', '--db', {str(db)!r}])\n"
            "print('SCIPY' if any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules) else 'NOSCIPY')\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "optimum of placement means" in out
    assert out.strip().endswith("NOSCIPY")
