"""Characterization of a workload on this machine (`assign characterize`),
the model parameters fitted from it (`assign calibrate`) and the check of
the fitted model against measured placements (`assign validate`).

probes.py   the timer floor (pp-timer-floor) and the stressors (pp-stressor)
harness.py  the measured runs: cycles per packet per role, the breakdown,
            the slowdowns by sharing level, the pressure point
fit.py      model parameters from a characterization and a few placements
trust.py    why a calibrated file is less to be trusted (calibrate's warnings)
"""
