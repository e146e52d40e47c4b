"""Peaks-Over-Threshold on noisy values: the end point of the distribution of
placement *means* when each draw is measured with normal noise
(assign/EVT.md, "The optimum of placement means").

Model.  Draw j's placement has mean mu_j, iid from F.  Above a level u0 the
tail of F is a GPD with a finite end point tau (the optimum of means):
P(mu > u0 + d | mu > u0) = (1 - d/a)^alpha, a = tau - u0, alpha = -1/xi >= 1
(xi >= -1, as the paper's fit), plus, where the caller allows it (`atom`),
a share w of that mass at tau itself: how a tail whose mass piles up at the
end point (a space whose best few placements are drawn again and again)
looks.  (Shapes alpha < 1 would let the continuous part pile up at tau too;
tried, they biased the end point of thin continuous tails low: beta(2,3) at
1% noise, -2.8% against -1.6%.)  Draw j's
measurements average to xbar_j ~ N(mu_j, sd_j^2), sd_j = noise sd / sqrt(m_j)
for m_j measurements (the first one and its repetitions).

Data.  The tail set is the k draws whose first measurement exceeds t (the
paper's threshold, on first values); u0 = t - 4 sd1, so that a draw whose mean
lies below u0 almost never reaches t.  The likelihood of the tail set given
that it was selected, with the tail mass P(mu > u0) profiled out:

    L(tau, alpha) = sum_j log f_j - k log q     (q >= k/n; else p0 = 1)
    f_j = int phi_sdj(xbar_j - mu) dG(mu),  q = int Phi((mu - t)/sd1) dG(mu)

Repetitions may be chosen from the data seen so far (the planned ones go to
the leading draws): such a design is ignorable for the likelihood, which is
why every measurement of a tail draw enters f_j.

Numerics.  f_j and q are integrals of a Gaussian against the GPD; each is cut
into M cells over +-W noise sds around the point, clipped to [u0, tau]; a
cell's mass is exact (the closed-form survival) and sits at its exact first
moment, so a mass piled at tau is placed where it is.  The profile
likelihood of tau maximises over alpha on a lattice of log alpha, then by
parabola steps (profile_at); it is evaluated on a grid of end points (those
below the largest values only down to the first under the cut), and Brent's
method places its maximum and the interval's ends inside the grid's
brackets; the interval is {tau : L*(tau) >= L*(tau_hat) - c/2} with c the
chi-square(1) cut times the noiseless estimator's calibration factor at the
least favourable shape (calibration.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from .calibration import lr_factor
from .special import ndtr  # scipy.special.ndtr without scipy's import (special.py)

W = 6.5                     # half-width of a point's window, in its noise sds
M = 32                      # cells per window
U0_SDS = 4.0                # u0 = t - U0_SDS * sd1
ALPHA_MIN, ALPHA_MAX = 1.0, 2.0e4   # xi >= -1, as the paper's fit; mass piled at tau is the atom's
_GRID = np.linspace(0.0, 1.0, M + 1)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_BLOCK = 16                 # (tau, alpha) pairs evaluated per array operation (about 1 MB an array at k = 250)
# shares of the tail's mass at tau itself, profiled out (None: none)
ATOM_WEIGHTS: np.ndarray | None = np.array([0.0, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.22, 0.3, 0.4, 0.5,
                                             0.62, 0.75, 0.87, 0.95, 1.0])


@dataclass(frozen=True)
class TailSet:
    """What the likelihood sees: the tail draws' means and noise, the
    selection threshold and the number of draws."""

    xbar: np.ndarray        # (k,) mean of each tail draw's measurements
    sd: np.ndarray          # (k,) noise sd of that mean
    t: float                # threshold on first measurements
    sd1: float              # noise sd of one measurement at t
    n: int                  # draws in the sample
    atom: bool = True       # the model lets a share of the tail's mass sit at tau (a discrete top)

    @property
    def k(self) -> int:
        return int(self.xbar.size)

    @property
    def u0(self) -> float:
        return self.t - U0_SDS * self.sd1


class _Scratch:
    """Arrays reused from one evaluation to the next, by name and shape: allocated afresh, each costs a
    page fault per 4 KiB when glibc returns the freed ones to the system, a third of the likelihood's
    time (measured: 1,000 faults an evaluation).  fit() empties it when it ends."""

    def __init__(self) -> None:
        self.arrays: dict[tuple, np.ndarray] = {}

    def __call__(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        a = self.arrays.get((name, shape))
        if a is None:
            if len(self.arrays) > 96:  # shapes of another tail set: start afresh
                self.arrays.clear()
            a = self.arrays[(name, shape)] = np.empty(shape)
        return a

    def clear(self) -> None:
        self.arrays.clear()


_SCRATCH = _Scratch()


def _cells(lo: np.ndarray, hi: np.ndarray, u0: float, a: np.ndarray, alpha: np.ndarray,
           exp_scale: np.ndarray | None = None, shared: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """log mass and position of M cells spanning [lo, hi] (shape (P, K)), for
    the tail above u0 with end point u0 + a and shape alpha (P,), or, with
    exp_scale (P,), the exponential tail (the xi = 0 limit).  Returns arrays
    (M, P, K), the scratch's (valid until the next call with their shapes):
    cells outermost, so that a cell's neighbour, and the sums and maxima over
    a point's cells, are whole contiguous slabs (numpy reduces a short inner
    axis several times slower).  shared: every point has the same end point,
    and lo and hi are (1, K): the cells' edges are computed once (the same
    numbers)."""
    ws = _SCRATCH
    edges = (M + 1,) + lo.shape
    full = (M + 1, alpha.size, lo.shape[1])
    cells = (M, alpha.size, lo.shape[1])
    e = np.multiply(_GRID[:, None, None], (hi - lo)[None], out=ws("e", edges))
    e += lo[None]
    d = np.subtract(e, u0, out=e)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if exp_scale is None:
            aa, al = (a[:1] if shared else a)[None, :, None], alpha[None, :, None]
            r = np.divide(d, aa, out=ws("r", edges))
            np.subtract(1.0, r, out=r)
            np.clip(r, 0.0, 1.0, out=r)
            log_r = np.log(r, out=ws("log_r", edges))
            log_s = np.multiply(al, log_r, out=ws("log_s", full))
            s = np.exp(log_s, out=ws("s", full))
            tail_int = np.multiply(s, r, out=ws("tail_int", full))
            tail_int *= aa / (al + 1.0)      # int_d^a S
        else:
            sc = exp_scale[None, :, None]
            log_s = np.negative(d, out=ws("log_s", full))
            log_s /= sc
            s = np.exp(log_s, out=ws("s", full))
            tail_int = np.multiply(sc, s, out=ws("tail_int", full))
        s0, s1 = s[:-1], s[1:]
        mass = np.subtract(log_s[1:], log_s[:-1], out=ws("mass", cells))
        np.expm1(mass, out=mass)
        np.negative(mass, out=mass)
        mass *= s0
        mass[~(s0 > 0)] = 0.0
        d0, d1 = d[:-1], d[1:]  # the cells' edges
        mom = np.multiply(d0, s0, out=ws("mom", cells))
        tmp = np.multiply(d1, s1, out=ws("tmp", cells))
        mom -= tmp
        mom += np.subtract(tail_int[:-1], tail_int[1:], out=tmp)
        nil = ~(mass > 1e-300)
        pos = np.divide(mom, mass, out=mom)
        mid = np.add(d0, d1, out=ws("mid", d0.shape))
        mid *= 0.5
        np.copyto(pos, mid, where=nil)  # the midpoint where the mass is nil
        log_mass = np.log(mass, out=ws("log_mass", cells))
        np.maximum(pos, d0, out=pos)
        np.minimum(pos, d1, out=pos)
    pos += u0
    return log_mass, pos


def _loglik_block(data: TailSet, tau: np.ndarray, alpha: np.ndarray, exp_scale: np.ndarray | None) -> np.ndarray:
    """Log-likelihood (up to a constant) at P parameter points (arrays (P,))."""
    u0 = data.u0
    p, k = tau.size, data.k
    x, sd = data.xbar, data.sd
    t, s1 = data.t, data.sd1
    # one end point for the whole block (a profile over the shape): its cells' edges computed once
    shared = exp_scale is None and bool(np.all(tau == tau[0]))
    if exp_scale is None:
        a = tau - u0
        top = tau[:1, None] if shared else tau[:, None]
        h = np.minimum(sd[None, :] / 4.0, (a[:1] if shared else a)[:, None] / 4.0)
        lo = np.clip(np.minimum(x - W * sd, top - h), u0, top)
        hi = np.clip(np.maximum(x + W * sd, u0 + h), u0, top)
        qhi = np.minimum(t + W * s1, top)
        qlo = np.minimum(max(t - W * s1, u0), qhi)
        above = np.where(tau > t + W * s1, np.exp(alpha * np.log(np.clip(1.0 - (t + W * s1 - u0) / a, 1e-300, 1.0))),
                         0.0)
    else:
        a = np.full(p, np.inf)
        lo = np.broadcast_to(np.maximum(x - W * sd, u0), (p, k))
        hi = np.broadcast_to(np.maximum(x + W * sd, u0 + sd / 4.0), (p, k))
        qlo, qhi = np.full((p, 1), max(t - W * s1, u0)), np.full((p, 1), t + W * s1)
        above = np.exp(-(t + W * s1 - u0) / exp_scale)
    # the window of q = P(first measurement > t | mu > u0) is one more column beside the points' windows
    log_mass, pos = _cells(np.concatenate([lo, qlo], axis=1), np.concatenate([hi, qhi], axis=1), u0, a, alpha,
                           exp_scale, shared)
    lm_q, pos_q = log_mass[:, :, k].copy(), pos[:, :, k].copy()
    # the points' densities on the whole arrays, q's column with them (the values at t, its noise sd: finite,
    # and not read): whole contiguous arrays, which numpy's vector loops take the same way whatever
    # their memory holds (a slice's rows started at other alignments: exp's last bit differed)
    xq, sdq = np.append(x, t), np.append(sd, s1)
    z = np.subtract(xq, pos, out=pos)
    z /= sdq
    z *= z
    z *= 0.5                                  # (z z) / 2 = (z / 2) z exactly
    lg = np.subtract(log_mass, z, out=log_mass)
    mx = lg.max(axis=0)
    finite = np.isfinite(mx)
    mxs = np.where(finite, mx, 0.0)
    lg -= mxs
    with np.errstate(divide="ignore"):
        lf = np.where(finite, mxs + np.log(np.exp(lg, out=lg).sum(axis=0)), -np.inf)[:, :k]
    lf = lf - np.log(sd)[None, :] - _LOG_SQRT_2PI
    q = above + (np.exp(lm_q) * ndtr((pos_q - t) / s1)).sum(axis=0)
    n = data.n
    c = k * math.log(k / n) + (n - k) * math.log1p(-k / n)
    if ATOM_WEIGHTS is not None and exp_scale is None and data.atom:
        # a share w of the tail's mass sits at tau itself (a few placements at the optimum, drawn again
        # and again): profiled out on a grid of w
        w = ATOM_WEIGHTS[None, :, None]
        la = (-0.5 * ((x[None, :] - tau[:, None]) / sd[None, :]) ** 2 - np.log(sd)[None, :] - _LOG_SQRT_2PI)[:, None, :]
        with np.errstate(divide="ignore"):
            lf = np.logaddexp(np.log(w) + la, np.log1p(-w) + lf[:, None, :])      # (P, W, k)
        qa = ndtr((tau - t) / s1)[:, None]
        q = ATOM_WEIGHTS[None, :] * qa + (1.0 - ATOM_WEIGHTS[None, :]) * q[:, None]   # (P, W)
        ll = lf.sum(axis=2)
    else:
        ll = lf.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(q >= k / n, ll - k * np.log(q), ll + (n - k) * np.log1p(-np.minimum(q, 1.0)) - c)
    out = np.where(np.isfinite(out), out, -np.inf)
    return out.max(axis=1) if out.ndim == 2 else out


def loglik(data: TailSet, tau, alpha) -> np.ndarray:
    """Log-likelihood at paired (tau, alpha) points, broadcast together."""
    tau, alpha = np.broadcast_arrays(np.asarray(tau, dtype=float), np.asarray(alpha, dtype=float))
    shape = tau.shape
    # a grid of end points (rows) by shapes: blocks within a row share the row's end point and its cells'
    # edges (_loglik_block); each point's value does not depend on the block it is computed in
    row = shape[-1] if tau.ndim >= 2 and bool(np.all(tau == tau[..., :1])) else tau.size
    tau, alpha = tau.ravel(), alpha.ravel()
    out = np.empty(tau.size)
    for r in range(0, tau.size, row):
        for i in range(r, r + row, _BLOCK):
            j = min(i + _BLOCK, r + row)
            out[i:j] = _loglik_block(data, tau[i:j], alpha[i:j], None)
    return out.reshape(shape)


def loglik_exponential(data: TailSet, scale) -> np.ndarray:
    """Log-likelihood of the exponential tail (xi = 0: no end point) at scales."""
    scale = np.atleast_1d(np.asarray(scale, dtype=float))
    out = np.empty(scale.size)
    for i in range(0, scale.size, _BLOCK):
        s = scale[i:i + _BLOCK]
        out[i:i + _BLOCK] = _loglik_block(data, np.full(s.size, np.inf), np.full(s.size, np.inf), s)
    return out


def _exponential_max(data: TailSet, span: float) -> float:
    """The exponential tail's largest log-likelihood on a log grid of 40 scales (1e-3 to 1e3 tail widths):
    climbed from the grid point nearest the mean excess over u0 (its likelihood has one peak in the
    scale), a handful of evaluations instead of 40."""
    scales = span * np.geomspace(1e-3, 1e3, 40)
    mean_excess = float(np.mean(data.xbar)) - data.u0
    i = int(np.argmin(np.abs(np.log(scales) - math.log(max(mean_excess, 1e-300)))))
    y: dict[int, float] = {}

    def evaluate(js: list[int]) -> None:
        js = [j for j in js if 0 <= j < scales.size and j not in y]
        if js:
            y.update(zip(js, loglik_exponential(data, scales[js]).tolist()))

    evaluate([i - 1, i, i + 1])
    while True:
        at = max(sorted(y), key=lambda j: y[j])  # the lowest scale on ties (np.max over the grid)
        if at == min(y) and at > 0:
            evaluate([at - 1, at - 2])
        elif at == max(y) and at < scales.size - 1:
            evaluate([at + 1, at + 2])
        else:
            return y[at]


def _parabola_max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Vertex of the parabola through three points per row (x, y of shape (P, 3))."""
    x0, x1, x2 = x[:, 0], x[:, 1], x[:, 2]
    y0, y1, y2 = y[:, 0], y[:, 1], y[:, 2]
    num = (x1 - x0) ** 2 * (y1 - y2) - (x1 - x2) ** 2 * (y1 - y0)
    den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = x1 - 0.5 * num / den
    ok = np.isfinite(v) & (den != 0)
    return np.where(ok, np.clip(v, x0, x2), x1)


_INNER = 13      # end points of the fit's grid below the largest values (the rest lie beyond them)
_PARABOLAS = 3   # parabola steps after the lattice's climb
_STEP = 0.25     # the lattice of log shapes the profile climbs: its spacing
_LATTICE = int(math.ceil((math.log(ALPHA_MAX) - math.log(ALPHA_MIN)) / _STEP))  # its last point (ALPHA_MAX)


def profile_at(data: TailSet, tau: float, alpha_guess: float | None = None) -> tuple[float, float]:
    """L*(tau) = max over alpha of the log-likelihood, and the maximising alpha.

    The log-likelihood in log alpha rises smoothly and then falls off a cliff (the shape at which the
    largest values become improbable), its maximum near the cliff's edge, so one parabola through grid
    points places it poorly.  Here: a fixed lattice of log shapes (spacing _STEP from ALPHA_MIN to
    ALPHA_MAX, so that the value at an end point does not depend on the guess that started the climb),
    climbed from the guess (or from the best of every other lattice point) while the likelihood rises,
    then three parabola steps that keep the best point bracketed.  Against a grid of 300 shapes refined
    by golden sections, at 171 end points and guesses of 19 tails: median error 3e-7, largest 2e-5
    log-likelihood units (two steps: 1e-4 and 5e-3; the previous scheme, nine shapes around the guess
    and one parabola: 2e-3 median, up to 0.44), in 6.5 evaluations of the likelihood (in 4 blocks)
    rather than 10 (assign/notes/2026-11-28-estimate-at-a-million.md)."""
    lo_edge, hi_edge = math.log(ALPHA_MIN), math.log(ALPHA_MAX)
    y: dict[int, float] = {}

    def x_of(k: int) -> float:
        return min(lo_edge + _STEP * k, hi_edge)

    def evaluate(ks) -> None:
        ks = [k for k in ks if 0 <= k <= _LATTICE and k not in y]
        if ks:
            ys = loglik(data, np.full(len(ks), tau), np.exp(np.array([x_of(k) for k in ks])))
            y.update(zip(ks, ys.tolist()))

    if alpha_guess is None:
        evaluate(range(0, _LATTICE + 1, 2))
        k0 = max(sorted(y), key=lambda k: y[k])
    else:
        k0 = min(max(int(round((math.log(alpha_guess) - lo_edge) / _STEP)), 0), _LATTICE)
    evaluate([k0 - 1, k0, k0 + 1])
    while True:
        at = max(sorted(y), key=lambda k: y[k])  # the lowest shape on ties
        if at - 1 not in y and at > 0:
            evaluate([at - 1, at - 2])
        elif at + 1 not in y and at < _LATTICE:
            evaluate([at + 1, at + 2])
        else:
            break
    j = min(max(at, 1), _LATTICE - 1)
    evaluate([j - 1, j + 1])
    # a bracket: the best point between two lower ones (at a bound of the shapes, the three nearest it)
    three = [(x_of(k), y[k]) for k in (j - 1, j, j + 1)]
    best = max(three, key=lambda p: p[1])
    for _ in range(_PARABOLAS):
        v = float(_parabola_max(np.array([[p[0] for p in three]]), np.array([[p[1] for p in three]]))[0])
        if v in (three[0][0], three[1][0], three[2][0]):
            break
        yv = float(loglik(data, np.array([tau]), np.exp(np.array([v])))[0])
        (x0, y0), (x1, y1), (x2, y2) = three
        if yv > y1:   # the vertex is the new middle, between the middle and the outer point on its side
            three = [(x1, y1), (v, yv), (x2, y2)] if v > x1 else [(x0, y0), (v, yv), (x1, y1)]
        else:         # the vertex replaces the outer point on its side
            three = [(x0, y0), (x1, y1), (v, yv)] if v > x1 else [(v, yv), (x1, y1), (x2, y2)]
        if yv > best[1]:
            best = (v, yv)
    return best[1], math.exp(best[0])


@dataclass
class DeconvolutionFit:
    tau: float | None                 # estimated end point of the means (None: no finite one)
    ci_low: float | None
    ci_high: float | None             # math.inf: one-sided
    alpha: float | None
    loglik: float
    loglik_exponential: float
    cut: float
    cut_factor: float
    status: str                       # ok | unbounded
    u0: float
    profile_points: list[tuple[float, float]] = field(default_factory=list)
    beyond_reach: bool = False        # the upper end lies beyond `reach`: not searched for (ci_high infinite)

    @property
    def xi(self) -> float | None:
        return None if self.alpha is None else -1.0 / self.alpha


def _brent_max(f, lo: float, hi: float, tol: float, iters: int = 60) -> tuple[float, float]:
    """Maximum of f on [lo, hi] to within tol: Brent's method (golden sections, and the vertex of
    the parabola through the best three points where it falls well inside), as scipy's fminbound.
    Here rather than scipy.optimize, whose import alone takes twice the 0.3 s `assign estimate`
    has; a smooth profile's maximum takes about 8 evaluations instead of golden sections' 20."""
    c = (3.0 - math.sqrt(5.0)) / 2.0
    a, b = lo, hi
    x = w = v = a + c * (b - a)
    fx = fw = fv = -float(f(x))
    d = e = 0.0
    for _ in range(iters):
        m = 0.5 * (a + b)
        tol1 = 0.5 * tol + 1e-12 * abs(x)
        tol2 = 2.0 * tol1
        if abs(x - m) <= tol2 - 0.5 * (b - a):
            break
        golden = True
        if abs(e) > tol1 and all(map(math.isfinite, (fx, fw, fv))):
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            if abs(p) < abs(0.5 * q * e) and q * (a - x) < p < q * (b - x):
                e, d = d, p / q  # the parabola's vertex
                u = x + d
                if u - a < tol2 or b - u < tol2:
                    d = tol1 if x < m else -tol1
                golden = False
        if golden:
            e = (a - x) if x >= m else (b - x)
            d = c * e
        u = x + (d if abs(d) >= tol1 else (tol1 if d > 0 else -tol1))
        fu = -float(f(u))
        if fu <= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return float(x), float(-fx)


def _root(f, a: float, b: float, tol: float, fa: float | None = None, fb: float | None = None) -> float:
    """A root of f in [a, b] where f(a) and f(b) differ in sign, to within tol: Brent's method
    (inverse quadratic and secant steps, bisection where they would not shrink the bracket, and a
    step of tol across a root approached from one side), as scipy's brentq, without scipy's
    import (_brent_max); a value that is not finite (the profile's flat -inf regions) bisects.
    fa, fb: the caller's values at a and b, where it has them."""
    fa = float(f(a) if fa is None else fa)  # the caller's values where it has them
    fb = float(f(b) if fb is None else fb)
    c, fc = a, fa
    d = e = b - a
    for _ in range(100):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol1 = 0.5 * tol
        xm = 0.5 * (c - b)
        if abs(xm) <= tol1 or fb == 0.0:
            return float(b)
        finite = math.isfinite(fa) and math.isfinite(fb) and math.isfinite(fc)
        if finite and abs(e) >= tol1 and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:
                p, q = 2.0 * xm * s, 1.0 - s
            else:
                q, r = fa / fc, fb / fc
                p = s * (2.0 * xm * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            p = abs(p)
            if 2.0 * p < min(3.0 * xm * q - abs(tol1 * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = xm
        else:
            d = e = xm
        a, fa = b, fb
        b += d if abs(d) > tol1 else (tol1 if xm > 0 else -tol1)
        fb = float(f(b))
    return float(b)


def fit(data: TailSet, confidence: float = 0.95, calibrate: bool = True, reach: float = math.inf
        ) -> DeconvolutionFit:
    """Maximum likelihood end point of the means, and its profile-likelihood interval.  reach: the
    interval's upper end is not looked for beyond it (optimum.py's REACH: an end that far out is
    reported as none); ci_high is then infinite and beyond_reach true."""
    try:
        return _fit(data, confidence, calibrate, reach)
    finally:
        _SCRATCH.clear()


def _fit(data: TailSet, confidence: float, calibrate: bool, reach: float) -> DeconvolutionFit:
    from statistics import NormalDist

    u0 = data.u0
    xmax = float(np.max(data.xbar + 2.0 * data.sd))
    span = max(xmax - u0, 1e-12 * max(abs(xmax), 1.0))
    # tau can lie below the largest values (they may be noise); never at or below u0
    grid = u0 + span * np.concatenate([np.linspace(0.05, 1.0, _INNER + 1)[:-1], 1.0 + np.geomspace(0.01, 40.0, 14)])
    low_end = u0 + 1e-9 * span
    # the end point and the interval's ends to 1e-4 of the tail's width: finer than the profile's own
    # roughness (its shape is maximised on a grid: moving the ends by a few 1e-3 of the width changes
    # nothing a user reads), four evaluations fewer than 1e-5 for each
    tol = span * 1e-4

    guess: list[float] = []
    shapes: dict[float, float] = {}  # the maximising shape at each end point profiled

    def prof(tau: float) -> float:
        y, a = profile_at(data, tau, guess[0] if guess else None)
        guess[:] = [shapes.setdefault(tau, a)]
        return y

    # the paper's estimator's calibration (simulated on noiseless GPD tails) at the least favourable
    # shape, not the fitted one: with noise and the atom the fitted shape is loose, and the factor at
    # it left intervals short (uniform(0,1) at 2% noise, n = 3000: 14 of 16 covered against 16 of 16)
    factor = max(lr_factor(x, data.k, confidence) for x in np.linspace(-1.0, -0.1, 10)) if calibrate else 1.0
    cut = NormalDist().inv_cdf(0.5 + confidence / 2.0) ** 2 / 2.0 * factor

    # the profile itself on the grid, each point's shape the guess for the next (as dear as the grid
    # on a coarse grid of shapes was, which missed the peak: where the end point lies far, the
    # likelihood is sharp in the shape, and at a million draws of the T2 the coarse grid put the
    # maximum two grid points above the profile's, 1.4 log-likelihood units lower): the end points
    # beyond the largest values first, upward
    pv = [prof(float(x)) for x in grid[_INNER:]]
    # still rising at the grid's end: further out by growing steps, until it falls (a tail that is
    # nearly exponential peaks a few hundred widths out) or no end point is found within 10^4 widths
    while int(np.argmax(pv)) == len(pv) - 1 and grid[-1] - u0 < 1e4 * span:
        grid = np.append(grid, u0 + 2.0 * (grid[-1] - u0))
        pv.append(prof(float(grid[-1])))
    pv = np.concatenate([np.full(_INNER, -np.inf), pv])
    # then those below them, downward, until one lies below the cut from the best so far: an end point
    # below more of the values only explains them worse (the profile falls by hundreds of units a grid
    # step there), and the interval's lower end is bracketed by that point and the one above it
    guess[:] = [shapes[float(grid[_INNER])]]
    lowest = _INNER
    if int(np.argmax(pv)) != grid.size - 1:
        for j in range(_INNER - 1, -1, -1):
            pv[j] = prof(float(grid[j]))
            lowest = j
            if pv[j] < float(np.max(pv)) - cut:
                break
    i = int(np.argmax(pv))
    points = list(zip(grid[lowest:].tolist(), pv[lowest:].tolist()))
    # the exponential limit: the tail without an end point (xi -> 0)
    l_exp = _exponential_max(data, span)
    if i == grid.size - 1:
        return DeconvolutionFit(None, None, math.inf, None, float(pv[i]), l_exp, math.nan, math.nan, "unbounded", u0,
                                points)
    guess[:] = [shapes[float(grid[i])]]
    tau_hat, l_max = _brent_max(prof, float(grid[i - 1]) if i > 0 else low_end, float(grid[i + 1]), tol=tol)
    if pv[i] > l_max:
        tau_hat, l_max = float(grid[i]), float(pv[i])
    alpha_hat = shapes[tau_hat]
    target = l_max - cut

    def g(tau: float) -> float:
        return prof(tau) - target

    # the lower end: the highest grid point below the estimate where the profile is under the cut
    # brackets it with the point above (or the estimate)
    below = np.flatnonzero((grid < tau_hat) & (pv < target))
    ci_low = low_end
    if below.size:
        j = int(below[-1])
        up = float(grid[j + 1]) if grid[j + 1] < tau_hat else tau_hat
        guess[:] = [shapes[up]]
        ci_low = _root(g, float(grid[j]), up, tol, float(pv[j]) - target, (pv[j + 1] if up != tau_hat else l_max) - target)
    else:
        guess[:] = [shapes[float(grid[0])]]
        g_low = g(low_end)
        if g_low < 0:
            ci_low = _root(g, low_end, float(grid[0]), tol, g_low, float(pv[0]) - target)
    ci_high = math.inf
    status = "ok"
    beyond = False
    if l_exp >= target:
        status = "unbounded"
    else:
        above = np.flatnonzero((grid > tau_hat) & (pv < target) & (grid <= reach))
        if above.size:
            j = int(above[0])
            down = float(grid[j - 1]) if grid[j - 1] > tau_hat else tau_hat
            guess[:] = [shapes[down]]
            ci_high = _root(g, down, float(grid[j]), tol, (pv[j - 1] if down != tau_hat else l_max) - target,
                            float(pv[j]) - target)
        else:
            # the profile is above the cut on every grid point up to the reach: at the reach itself, or
            # beyond the grid where the reach is further, by growing steps
            inside = np.flatnonzero(grid <= reach)
            hi = float(grid[inside[-1]]) if inside.size and grid[inside[-1]] > tau_hat else tau_hat
            g_hi = (float(pv[inside[-1]]) if hi != tau_hat else l_max) - target
            guess[:] = [shapes[hi]]
            step = max(hi - tau_hat, span * 0.05)
            for _ in range(80):
                if hi >= reach:  # the profile is still above the cut there: the end lies beyond the reach
                    beyond = True
                    break
                nxt = min(hi + step, reach)
                g_next = g(nxt)
                if g_next < 0:
                    ci_high = _root(g, hi, nxt, tol, g_hi, g_next)
                    break
                hi, g_hi, step = nxt, g_next, step * 1.6
            else:
                status = "unbounded"
    return DeconvolutionFit(tau_hat, ci_low, ci_high, alpha_hat, l_max, l_exp, cut, factor, status, u0, points, beyond)
