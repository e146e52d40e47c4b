"""Why a calibrated parameter file is less to be trusted: what `assign
calibrate` checks before it writes the file (kept under
calibration.warnings), and every command that reads the file repeats."""
from __future__ import annotations

from .rounds import noise_of

# placement noise over rounds (median CV, raw) above which calibrate warns: stored calibrations
# noisier than this validated worse (assign/research/calibration-noise.py, assign/notes/2026-11-25-calibration-noise.md)
CALIBRATION_NOISE_WARN_PCT = 10.0
FIT_ERROR_WARN_PCT = 10.0  # validate's goal for the median error (commands/validate.py GOAL_MEDIAN_PCT)


def calibration_warnings(noise_pct: float | None, fit_err_pct: float,
                         reference: tuple[float, float] | None) -> list[str]:
    """Why a calibration is less to be trusted: its placements' rounds moved more than
    CALIBRATION_NOISE_WARN_PCT (noise_pct: median CV over rounds, raw; None with one
    round), or the fit misses its own placements by more than validate's median goal."""
    out = []
    if noise_pct is not None and noise_pct > CALIBRATION_NOISE_WARN_PCT:
        ref = (f"; the drift reference measured from {reference[0]:,.0f} to {reference[1]:,.0f} packets/s"
               if reference is not None else "")
        out.append(f"the calibration placements' rounds varied by {noise_pct:.1f}% (median CV over rounds, "
                   f"measured), above {CALIBRATION_NOISE_WARN_PCT:g}%: the machine's speed moved while calibrate "
                   f"measured{ref}. Stored calibrations that noisy validated worse (assign/notes/"
                   "2026-11-25-calibration-noise.md); calibrate again in a quieter minute, or with more --placement-reps")
    if fit_err_pct > FIT_ERROR_WARN_PCT:
        out.append(f"the fit misses its own calibration placements by {fit_err_pct:.1f}% (median abs error, "
                   f"estimated), above validate's {FIT_ERROR_WARN_PCT:g}% goal: the model does not follow these "
                   "measurements, and other placements will not do better")
    return out


def stored_warnings(cal: dict) -> list[str]:
    """The warnings of a calibration file's "calibration" object; for a file written before
    calibrate warned, the same checks on what it stored."""
    if "warnings" in cal:
        return list(cal["warnings"])
    reps = [p.get("measured_reps_pps") or [] for p in cal.get("placements", [])]
    refs = ((cal.get("drift") or {}).get("reference") or {}).get("measured_pps") or []
    return calibration_warnings(noise_of(reps), float(cal.get("median_abs_err_pct", 0.0)),
                                (min(refs), max(refs)) if refs else None)
