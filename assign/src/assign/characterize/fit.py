"""Model parameters for this machine, fitted from a characterization and a
few measured placements (`assign calibrate`), and random placements of 1 to
--max-instances (default 4) co-located instances (calibration and validation
draw them with different seeds; validation also skips any placement
calibration used).

What each parameter comes from:
  base_ns (R, P, T)      characterize: work cycles per packet alone (median of
                         the repetitions) / TSC rate, times one scale factor
                         fitted on the placements (the profile build and the
                         default build differ)
  pu                     "pu_sharing": "timeshare": tasks on one context add
                         their costs (round-robin polling), measured by the
                         characterization's pu slowdowns
  residual at a level L beside the context (chip here): demand_L = 1 per
                         task, sensitivity_L = 0, residual_L fitted on the
                         placements: a task slows by residual_L per task
                         running on another context that shares L
  comm_ns at level L     fitted on the placements (least squares on log throughput);
                         comm_ns.pu too: "fusion" is set (an instance with R, P
                         and T on one context pays no communication cost, as the
                         runtime polls them as one), so comm_ns.pu is the ring
                         between two tasks of an unfused instance on one context
  context_share          fitted on the placements: the share of each context's
                         time the workload's tasks get (a task's cost is divided
                         by it); on a machine shared with other load, the
                         contexts differ many times over (characterize's
                         role-pair slowdowns).  One share for all contexts
                         (--context-shares one, the default), one per context,
                         or whichever Akaike's criterion prefers (choose):
                         shares per context follow the other load of the
                         calibration's minutes, not the machine (CONTEXT_SHARES
                         below says what they cost on new placements)
  span_factor            fitted on the placements: an instance spread over k
                         contexts runs at span_factor ** (k - 1) of its rate
                         (characterize's role-pair slowdowns: an instance split
                         over two contexts of a machine with other load is many
                         times slower, its stages run only while both contexts
                         give them time)
  return_ns              fitted on the placements: what an R task pays per packet
                         for a buffer that comes back from another context
                         (backends/model.py, _remote_buffers: the instances share
                         one pool with a cache per context; R's port rewrites the
                         buffer's lines, which another context's T freed or P
                         wrote).  Measured with the profile build (ipfwd-l1,
                         2026-11-25): R's receive took 27.5 cycles per packet with
                         P on its context and 72 with P on the other.  Without it
                         the model put every split placement at one cost, where
                         one split instance ran at 26-34 Mpps and four balanced
                         ones, each context refilling buffers its own T freed,
                         at 48-54 (val23); held out, it took ipfwd-l1's p90
                         error from 32.6% to 17.7%
  transit_ns             fitted on the placements where Akaike's criterion keeps
                         it: what a buffer costs each side when it crosses the
                         pool's common store (backends/model.py, _pool_transit:
                         a context with more R than T tasks takes the difference
                         from the store, one with more T than R gives it back).
                         Profile build, ipfwd-l1, 2026-11-25: with both R tasks
                         and one T on a context, R's receive took 80-112 ns per
                         packet, against 52 with two R and two T there, every
                         buffer written elsewhere in both.  Replayed on stored
                         validations (assign/research/model-holdout.py) it took ipfwd-l1's
                         held-out p90 from 25-28% to 18-21% on 8-16 training
                         placements and was level on 24: hence the choice.
                         Akaike's criterion also weighs it on R's side only
                         ("transit_sides": "gets"): a fused T's cycles per
                         packet did not move with its context's surplus (13
                         and 13, ipfwd-l1, 2026-11-26), a fused R's did with
                         its deficit (34 and 143); on the six stored runs of
                         that day the criterion took that form for ipfwd-l1
                         each time (validation p90 13.5-20.3% to 10.8-17.1%)
  rx_crowding            fitted on the placements where Akaike's criterion keeps
                         it: what an R task's cost grows by per R task of another
                         instance on its context (their ports' replays and
                         buffers evict each other's lines).  Profile build,
                         analyzer, 2026-11-25: R's receive took 81 cycles per
                         packet fused alone, 188-190 with a second fused
                         instance on its context
  span_rt                fitted on the placements where Akaike's criterion keeps
                         it: the rate factor, in place of span_factor, of an
                         instance split with R and T on one context and P on the
                         other.  The runtime's split T owns the lines of the
                         buffers that its context's R refills next
                         (runtime/pp_task.c, own_freed_lines), which no other
                         split shape gets: bench/ipfwd.py's P alone ran 14%
                         faster with it (ipfwd-l1, 2026-11-26), and validation
                         val59 measured those splits faster than the other
                         shapes that one span_factor priced alike.  Replayed
                         on the stored runs val48-val59, the raw p90 fell in
                         17 runs and rose in 7; measured in val60-val61, where
                         the criterion kept it, in 7 runs of 9 and rose in 2
                         (assign/notes/2026-11-27-span-rt.md)
  throughput             "equal-packets": calibrate and validate measure --packets
                         windows (the same packet count per instance, the window
                         ends when the slowest instance is done), so the modelled
                         rate is instances x the slowest instance's rate, not the
                         sum of their rates.  Stacked placements (one fused
                         instance on a context, two or three on the other)
                         measured 25-35% below balanced ones; fitted with the
                         sum, the chip residual made up for it and predicted
                         the balanced 4-instance ones 20-24% slow (ahocorasick,
                         2026-11-24)
  everything else        kept from the packaged defaults, "not calibrated"
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..backends.model import CONTENTION_LEVELS, ModelBackend, ModelParams
from ..topology import LEVELS, Topology
from ..workloads import ROLES, Workload

CAL_SEED = 7001   # draws of the calibration placements
VAL_SEED = 7002   # draws of the validation placements
MAX_INSTANCES = 4  # default of --max-instances: what a 2-context machine runs in a few minutes
# default of calibrate --placements (random ones; the contrasts come on top).  Cross-validated on
# stored validation runs (assign/research/model-holdout.py --train 8,16,24), the held-out p90 error of
# ipfwd-l1 and analyzer fell from 22-27% fitted on 8 to 14-19% on 24: the fit has 7-8 parameters
CAL_PLACEMENTS = 24


# The window of each measured placement (calibrate --placement-packets, validate --packets) by
# default: what one instance, fused alone, forwards in WINDOW_S at the characterized cycles per
# packet, and at least MIN_WINDOW_PACKETS.  The runtime times a --packets window from the workers'
# launch, so a short one holds their start (re-pinning, cold caches, stateful's fresh flow table):
# with 100,000 packets (6-10 ms at stateful's rate), stateful's two fused instances measured 15.7 to
# 20.6 Mpps over ten tries and one instance 9.1-10.5 on context 0 against 12.3-13.4 on context 1; with
# 1,000,000, 21.6-23.1, and 13.6-13.8 against 14.6-14.8 (2026-11-26; assign/research/window.py measures it,
# assign/notes/2026-11-26-window.md)
WINDOW_S = 0.1
MIN_WINDOW_PACKETS = 100_000  # the fixed default before; ahocorasick's 0.1 s is fewer


def window_packets(char: dict) -> int:
    """Default packets per instance of a measured placement's window (see WINDOW_S): the packets
    one fused instance forwards in WINDOW_S at the characterization's cycles per packet (R, P and
    T added: they take turns on one context), two significant digits, at least
    MIN_WINDOW_PACKETS."""
    hz = float(char["timer"]["tsc_hz"])
    cycles = sum(float(char["roles"][r].get("median_cycles_per_packet", char["roles"][r]["cycles_per_packet"]))
                 for r in ROLES)
    if not (hz > 0 and cycles > 0):
        raise ValueError(f"characterization: TSC rate {hz} and cycles per packet {cycles} must be positive")
    n = hz / cycles * WINDOW_S
    step = 10 ** max(0, int(np.floor(np.log10(n))) - 1)
    return max(MIN_WINDOW_PACKETS, int(np.ceil(n / step) * step))


def random_placements(topo: Topology, seed: int, n: int, skip: set[tuple] = frozenset(),
                      max_instances: int = MAX_INSTANCES) -> list[tuple[int, tuple]]:
    """n placements (instances, PU os_index per task), instances uniform in
    1..max_instances and each task on a uniform context (co-location
    allowed), draw i a function of (seed, i); placements in `skip` are left
    out."""
    out: list[tuple[int, tuple]] = []
    seen: set[tuple] = set()
    i = 0
    os_idx = topo.os_index
    while len(out) < n:
        if i > 100 * n + 1000:  # checked before a duplicate's continue: a space smaller than n ends here
            raise ValueError(f"cannot draw {n} distinct placements of 1 to {max_instances} instance(s) on "
                             f"{topo.n_contexts} contexts (there are {placement_space(topo, max_instances):,})")
        rng = np.random.default_rng([seed, i])
        k = int(rng.integers(1, max_instances + 1))
        ctx = tuple(int(os_idx[c]) for c in rng.integers(0, topo.n_contexts, size=3 * k))
        i += 1
        if (k, ctx) in skip or (k, ctx) in seen:
            continue
        seen.add((k, ctx))
        out.append((k, ctx))
    return out


def placement_space(topo: Topology, max_instances: int) -> int:
    """How many distinct placements random_placements can draw: every task of
    k = 1..max_instances instances on any context."""
    return sum(topo.n_contexts ** (3 * k) for k in range(1, max_instances + 1))


def contrast_placements(topo: Topology, max_instances: int) -> list[tuple[str, tuple[int, tuple]]]:
    """Named placements that random draws rarely give but that the model's top
    ranks are made of, measured by calibration beside its random ones so that
    the fit sees the effects they separate:
      fused     the drift reference's placement (rounds.reference_placement: k
                instances, each fused on a context c_i of its own), the
                model's best on a machine of up to four contexts
      crossing  the reference's load, one R, P and T on every context, with
                every hop between contexts (instance i: R and T on c_i, P on
                c_i+1): against the reference, what handing every packet to
                another context and back costs.  On the development VM,
                stateful's model put such placements level with the fused
                ones, and they ran 5-10% below them (validate --top 5,
                drift-corrected)
      stacked   the reference plus one more fused instance on c_0: two
                instances taking turns on one context (ipfwd-l1's model put
                those 1-12% above what they measured)
    A machine of one context has no crossing one; one of max_instances
    contexts or more has no stacked one."""
    from .rounds import crossing_reference_placement, reference_placement

    k, ctx = reference_placement(topo, max_instances)
    cs = [ctx[3 * i] for i in range(k)]
    out: list[tuple[str, tuple[int, tuple]]] = [("fused", (k, ctx))]
    crossing = crossing_reference_placement(topo, max_instances)
    if crossing is not None:
        out.append(("crossing", crossing))
    if k + 1 <= max_instances:
        out.append(("stacked", (k + 1, ctx + (cs[0],) * 3)))
    return out


def predict(topo: Topology, workload: str, params: dict, placements: list[tuple[int, tuple]]) -> np.ndarray:
    """Noise-free modelled throughput (packets/s) of each placement."""
    mp = ModelParams.from_dict(params, "(calibration)")
    lut = {int(o): i for i, o in enumerate(topo.os_index)}
    out = np.empty(len(placements))
    by_k: dict[int, list[int]] = {}
    for j, (k, _) in enumerate(placements):
        by_k.setdefault(k, []).append(j)
    for k, js in by_k.items():  # one backend and one batch per instance count
        be = ModelBackend(topo, Workload(workload, k), mp, noise_rel_sd=0.0)
        out[js] = be.predict(np.array([[lut[c] for c in placements[j][1]] for j in js]))[0]
    return out


def initial_params(char: dict, defaults: dict, throughput: str = "equal-packets") -> tuple[dict, dict[str, str]]:
    """Parameters from the characterization alone, and the status of each."""
    import copy

    p = copy.deepcopy(defaults)
    status: dict[str, str] = {}
    hz = float(char["timer"]["tsc_hz"])
    p["pu_sharing"] = "timeshare"
    status["pu_sharing"] = "calibrated (timeshare: characterize's pu slowdowns, measured)"
    if throughput != "sum":
        p["throughput"] = throughput
        status["throughput"] = ("equal-packets (calibrate and validate measure --packets windows: every instance "
                                "forwards the same packets, the window ends with the slowest)")
    for r in ROLES:
        cpp = char["roles"][r].get("median_cycles_per_packet", char["roles"][r]["cycles_per_packet"])
        p["roles"][r]["base_ns"] = cpp / hz * 1e9
        status[f"roles.{r}.base_ns"] = "calibrated (characterize: cycles per packet alone, measured; scale fitted)"
        p["roles"][r]["demand"]["pu"] = 1.0
        p["roles"][r]["sensitivity"]["pu"] = 0.0
    p.setdefault("residual", {})["pu"] = 0.0
    # characterize measures each role in the fused poll (no ring): a ring between tasks taking
    # turns on one context is not in those cycles, so comm_ns.pu is fitted on the placements
    p["fusion"] = True
    status["fusion"] = "calibrated (the runtime fuses R, P and T on one context: no ring, no communication cost)"
    p["comm_ns"]["pu"] = 0.0
    present = [lvl for lvl in char["sharing"] if lvl != "pu"]
    for lvl in CONTENTION_LEVELS[1:]:
        if lvl in present:
            for y in ROLES:
                p["roles"][y]["demand"][lvl] = 1.0
                p["roles"][y]["sensitivity"][lvl] = 0.0
                status[f"roles.{y}.demand.{lvl}"] = "calibrated (1 per task: residual carries the effect)"
            p["residual"][lvl] = 0.0
        else:
            for r in ROLES:
                status[f"roles.{r}.demand.{lvl}"] = "not calibrated (default kept: no two contexts here share " \
                                                   f"only level {lvl})"
                status[f"roles.{r}.sensitivity.{lvl}"] = status[f"roles.{r}.demand.{lvl}"]
            status[f"residual.{lvl}"] = status[f"roles.R.demand.{lvl}"]
    for lvl in LEVELS[1:]:
        if lvl not in present:
            status[f"comm_ns.{lvl}"] = f"not calibrated (default kept: no two contexts here share only level {lvl})"
    status["noise_rel_sd"] = "not calibrated (default kept; assign noise measures it)"
    return p, status


# bounds of the communication cost (a fraction of the largest base cost) and of the residual
# slowdown per task at the level beside the context
COMM_MAX = 0.5
RESIDUAL_MAX = 0.1
CROWDING_MAX = 1.0
# bound of return_ns, a multiple of the largest base cost
RETURN_MAX = 4.0


# --context-shares: one share for every context by default.  Shares per context, which Akaike's
# criterion on the calibration placements preferred on 16 contexts and often on 2, fitted the other
# load of the calibration's minutes and missed on the placements validate measured minutes later:
# refitted on 19 stored calibrations where the choice differs (assign/research/refit-calibration.py), one share
# gave the lower median error on the validation placements in 16 (assign/notes/2026-11-25-context-shares.md).
CONTEXT_SHARES = ("one", "per-context", "choose")
SHARES_WHY = {"one": "--context-shares one, the default",
              "per-context": "--context-shares per-context",
              "choose": "--context-shares choose: Akaike's criterion on the calibration placements"}


def fit(topo: Topology, workload: str, char: dict, defaults: dict,
        measure: Callable[[int, tuple], float], n_placements: int, log=print, reps: int = 1,
        drift_reference: bool | str | None = None, throughput: str = "equal-packets",
        max_instances: int = MAX_INSTANCES, fit_return: bool = True, context_shares: str = "one",
        fit_transit: bool | str = "choose", fit_crowding: bool | str = "choose",
        fit_span_rt: bool | str = "choose") -> dict:
    """The calibrated parameter file (dict) for `workload` on `topo`; with
    drift_reference ("fused", or True; "both": the crossing reference too),
    fitted to the drift-corrected medians (rounds.py).
    throughput "sum" fits the model's form before equal-packets, and
    fit_return False the form before return_ns (for
    assign/research/refit-calibration.py's comparisons); fit_transit, fit_crowding and
    fit_span_rt True or False fit transit_ns, rx_crowding and span_rt or leave
    them out (fit_transit
    "gets": fitted on the R side of the common store only, "transit_sides"),
    "choose" (what calibrate does) lets Akaike's criterion decide, between
    all three forms for transit_ns (assign/research/model-holdout.py compares them)."""
    from scipy.optimize import least_squares

    from .rounds import crossing_reference_placement, measure_rounds, noise_of, reference_placement
    from .trust import calibration_warnings

    params, status = initial_params(char, defaults, throughput)
    present = [lvl for lvl in char["sharing"] if lvl != "pu"]
    placements = random_placements(topo, CAL_SEED, n_placements, max_instances=max_instances)
    kinds = ["random"] * len(placements)
    for name, c in contrast_placements(topo, max_instances):
        if c not in placements:
            placements.append(c)
            kinds.append(name)
    if len(placements) > n_placements:
        log(f"calibration placements: {n_placements} random and {len(placements) - n_placements} contrasts ("
            + ", ".join(f"{kd} {k} instance(s) on {list(c)}" for kd, (k, c) in zip(kinds, placements)
                        if kd != "random") + "; characterize/fit.py contrast_placements says why)")
    reference = reference_placement(topo, max_instances) if drift_reference else None
    crossing = crossing_reference_placement(topo, max_instances) if drift_reference == "both" else None
    rounds = measure_rounds(placements, measure, reps, log, "calibration placement", reference, crossing=crossing)
    values = rounds.raw
    measured = rounds.medians(corrected=True)
    measured_arr = np.asarray(measured, dtype=float)
    base0 = {r: params["roles"][r]["base_ns"] for r in ROLES}

    os_idx = [int(o) for o in topo.os_index]
    n_ctx = len(os_idx)

    def solve(n_share: int, ring: bool, ret: bool, transit: bool | str, crowd: bool = False, srt: bool = False):
        """Least squares on log throughput with n_share context shares (one for all
        contexts, or one per context), comm_ns.pu fitted (ring) or 0, and
        return_ns (ret), transit_ns (transit; "gets": on the R side only), rx_crowding
        (crowd) and span_rt (srt) fitted or left out."""
        def with_x(x: np.ndarray) -> dict:
            q = {**params, "roles": {r: dict(params["roles"][r]) for r in ROLES},
                 "comm_ns": dict(params["comm_ns"])}
            if ret:
                q["return_ns"] = float(x[2 + 2 * len(present)])
            if transit:
                q["transit_ns"] = float(x[2 + 2 * len(present) + (1 if ret else 0)])
                if transit == "gets":
                    q["transit_sides"] = "gets"
            crowd_at = 2 + 2 * len(present) + (1 if ret else 0) + (1 if transit else 0)
            for r in ROLES:
                q["roles"][r]["base_ns"] = base0[r] * float(np.exp(x[0]))
            q["residual"] = dict(params["residual"])
            q["span_factor"] = float(np.exp(x[-1 - n_share]))
            shares = x[len(x) - n_share:]
            q["context_share"] = {str(o): float(np.exp(shares[i if n_share > 1 else 0]))
                                  for i, o in enumerate(os_idx)}
            for i, lvl in enumerate(present):
                q["comm_ns"][lvl] = float(x[1 + 2 * i])
                q["residual"][lvl] = float(x[2 + 2 * i])
            q["comm_ns"]["pu"] = float(x[1 + 2 * len(present)])
            if crowd:
                q["rx_crowding"] = float(x[crowd_at])
            if srt:  # just before span_factor
                q["span_rt"] = float(np.exp(x[-2 - n_share]))
            return q

        def residuals(x: np.ndarray) -> np.ndarray:
            return np.log(predict(topo, workload, with_x(x), placements)) - np.log(measured_arr)

        # comm and residual beside the context start at 0 and may grow only a little: with a handful of
        # noisy placements they trade off against the scale and the shares (a fit to the bounds otherwise)
        cmax = COMM_MAX * max(base0.values())
        rmax = [RETURN_MAX * max(base0.values())] if ret else []  # return_ns, only where fitted
        rmax += [RETURN_MAX * max(base0.values())] if transit else []  # transit_ns, likewise
        rmax += [CROWDING_MAX] if crowd else []  # rx_crowding
        # then log span_rt where fitted, log span_factor, log context shares
        x0 = np.array([0.0] + [0.0, 0.0] * len(present) + [0.0] + [0.0] * len(rmax) + [np.log(0.5)] * srt
                      + [np.log(0.5)] + [0.0] * n_share)
        lo = np.array([np.log(0.01)] + [0.0, 0.0] * len(present) + [0.0] + [0.0] * len(rmax)
                      + [np.log(1e-3)] * srt + [np.log(1e-3)] + [np.log(1e-3)] * n_share)
        # comm_ns.pu off: held at 0 (least_squares wants lo < hi) and not counted as a parameter
        hi = np.array([np.log(100.0)] + [cmax, RESIDUAL_MAX] * len(present) + [cmax if ring else 1e-9] + rmax
                      + [0.0] * srt + [0.0] + [0.0] * n_share)
        sol = least_squares(residuals, np.clip(x0, lo, hi), bounds=(lo, hi), diff_step=1e-2, x_scale="jac")
        rss = float(np.sum(sol.fun ** 2))
        n = len(placements)
        # Akaike's criterion for least squares: per-context shares and the ring cost must pay
        # for their extra parameters
        aic = n * np.log(max(rss, 1e-300) / n) + 2 * (len(x0) - (0 if ring else 1))
        return with_x(sol.x), sol, aic

    if context_shares not in CONTEXT_SHARES:
        raise ValueError(f"context shares {context_shares!r}: one of {', '.join(CONTEXT_SHARES)}")
    share_counts = {"one": [1], "per-context": [n_ctx], "choose": sorted({1, n_ctx})}[context_shares]
    for name, v, known in (("fit_transit", fit_transit, (True, False, "gets", "choose")),
                           ("fit_crowding", fit_crowding, (True, False, "choose")),
                           ("fit_span_rt", fit_span_rt, (True, False, "choose"))):
        if v not in known:
            raise ValueError(f"{name} {v!r}: one of {', '.join(map(repr, known))}")
    # transit_ns: left out, on both sides of the common store, or on R's side only (a T's cycles did
    # not move with its context's surplus: assign/MODEL.md, transit_sides)
    transits = [False, True, "gets"] if fit_transit == "choose" else [fit_transit]
    crowds = [False, True] if fit_crowding == "choose" else [bool(fit_crowding)]
    span_rts = [False, True] if fit_span_rt == "choose" else [bool(fit_span_rt)]
    shapes = [(k, ring, tr, cr, sr) for k in share_counts for ring in (False, True) for tr in transits
              for cr in crowds for sr in span_rts]
    fits = {shape: solve(shape[0], shape[1], fit_return, *shape[2:]) for shape in shapes}
    best = min(fits, key=lambda shape: fits[shape][2])
    params, sol, _ = fits[best]
    shares_kind = "one per context" if best[0] > 1 else "one for every context"
    ring_kind = "fitted" if best[1] else "0"
    # the optional terms: (name, what it is, the choices tried, the one taken)
    optional = [("transit_ns", "what a buffer costs when it crosses the pool's common store, from a context "
                 "that frees more than it allocates to one that allocates more", transits, best[2]),
                ("rx_crowding", "what an R task's cost grows by per R task of another instance on its context, "
                 "whose port's replay and buffers evict its own from the context's caches", crowds, best[3]),
                ("span_rt", "the rate factor of an instance split with R and T on one context and P on another, "
                 "in place of span_factor (the runtime's T owns the lines of the buffers its context's R refills "
                 "next)", span_rts, best[4])]

    def state(on: bool | str) -> str:
        return "fitted on the R side only" if on == "gets" else "fitted" if on else "left out"

    def shape_name(k: int, ring: bool, tr: bool | str, cr: bool, sr: bool) -> str:
        return (f"{'one per context' if k > 1 else 'one for every context'} with comm_ns.pu "
                f"{'fitted' if ring else '0'}"
                + "".join(f", {name} {state(on)}"
                          for (name, _, tried, _), on in zip(optional, (tr, cr, sr)) if len(tried) > 1))

    log(f"context shares: {shares_kind} ({SHARES_WHY[context_shares]}); ring within a context (comm_ns.pu): "
        f"{ring_kind}" + "".join(f"; {name}: {state(taken)}"
                                 for name, _, tried, taken in optional if len(tried) > 1)
        + " (Akaike's criterion on the calibration placements, estimated: "
        + ", ".join(f"{shape_name(*shape)} {fits[shape][2]:.1f}" for shape in shapes) + ")")
    for name, what, tried, taken in optional:
        if len(tried) > 1 or taken:
            how = "chosen by Akaike's criterion" if len(tried) > 1 else "fitted"
            status[name] = (f"calibrated ({state(taken)}, {how} on {len(placements)} "
                            f"measured placements: {what})")
    if fit_return:
        status["return_ns"] = (f"calibrated (fitted on {len(placements)} measured placements: an R task's cost "
                               "per buffer that comes back from another context, whose cache lines its port "
                               "rewrites)")
    status["span_factor"] = f"calibrated (fitted on {len(placements)} measured placements)"
    status["context_share"] = f"calibrated ({shares_kind}, {SHARES_WHY[context_shares]}; fitted on " \
                              f"{len(placements)} measured placements; the machine's other load at the time)"
    status["comm_ns.pu"] = (f"calibrated ({ring_kind}, chosen by Akaike's criterion on {len(placements)} "
                            "measured placements: the ring between two tasks of an unfused instance taking "
                            "turns on one context)")
    for lvl in present:
        status[f"comm_ns.{lvl}"] = f"calibrated (fitted on {len(placements)} measured placements)"
        status[f"residual.{lvl}"] = f"calibrated (fitted on {len(placements)} measured placements)"
    pred = predict(topo, workload, params, placements)
    err = np.abs(pred / measured_arr - 1.0) * 100.0
    drift = None
    if reference is not None:
        drift = {"reference": {"instances": reference[0], "contexts": list(reference[1]),
                               "measured_pps": rounds.reference},
                 **({"crossing_reference": {"instances": crossing[0], "contexts": list(crossing[1]),
                                            "measured_pps": rounds.crossing_reference}} if crossing else {}),
                 "noise_cv_pct_median_raw": noise_of(rounds.raw),
                 "noise_cv_pct_median_corrected": noise_of(rounds.corrected)}
        log(f"drift reference: {reference[0]} instance(s) on {list(reference[1])}, measured {len(rounds.reference)} "
            f"times: {min(rounds.reference):,.0f} to {max(rounds.reference):,.0f} packets/s; the fit uses the "
            "drift-corrected medians" + (f"; placement noise over rounds (median CV) {drift['noise_cv_pct_median_raw']:.1f}% "
                                         f"raw, {drift['noise_cv_pct_median_corrected']:.1f}% corrected"
                                         if reps > 1 else ""))
        status["drift_reference"] = (f"measured placements drift-corrected by a reference placement ({reference[0]} "
                                     f"instance(s) on {list(reference[1])}) measured around each"
                                     + (f"; those with an instance split over contexts by a crossing one "
                                        f"({crossing[0]} instance(s) on {list(crossing[1])}) measured beside it"
                                        if crossing else ""))
        if crossing:
            log(f"crossing reference: {crossing[0]} instance(s) on {list(crossing[1])}, measured "
                f"{len(rounds.crossing_reference)} times: {min(rounds.crossing_reference):,.0f} to "
                f"{max(rounds.crossing_reference):,.0f} packets/s; it corrects the placements with a split instance")
    log(f"fit: scale on base_ns {np.exp(sol.x[0]):.3f}, span_factor {params['span_factor']:.3f}, context_share "
        + ", ".join(f"{o}: {v:.3f}" for o, v in params["context_share"].items()) + ", "
        + f"comm_ns.pu {params['comm_ns']['pu']:.1f}, "
        + (f"return_ns {params['return_ns']:.1f}, " if "return_ns" in params else "")
        + (f"transit_ns {params['transit_ns']:.1f}"
           + (" (R side only), " if params.get("transit_sides") == "gets" else ", ") if "transit_ns" in params else "")
        + (f"rx_crowding {params['rx_crowding']:.3f}, " if "rx_crowding" in params else "")
        + (f"span_rt {params['span_rt']:.3f}, " if "span_rt" in params else "")
        + ", ".join(f"comm_ns.{lvl} {params['comm_ns'][lvl]:.1f}, residual.{lvl} {params['residual'][lvl]:.3f}"
                    for lvl in present)
        + f"; median abs error on the calibration placements {np.median(err):.1f}% (estimated)")
    warnings = calibration_warnings(noise_of(values), float(np.median(err)),
                                    (min(rounds.reference), max(rounds.reference)) if rounds.reference else None)
    not_cal = sorted(k for k, v in status.items() if v.startswith("not calibrated"))
    tree = topo.to_json()["tree"]
    return {
        "about": "Model parameters calibrated by assign calibrate for one workload on one machine "
                 "(see assign/CALIBRATE.md); status says where each "
                 "parameter comes from, not_calibrated lists those kept from the packaged defaults.",
        "calibrated_for": {"workload": workload, "machine": tree, "machine_summary": topo.summary()},
        "workloads": {workload: params},
        "calibration": {
            "status": status, "not_calibrated": not_cal,
            # validate draws its placements from the same range of instance counts
            "max_instances": max_instances,
            "scale": float(np.exp(sol.x[0])),
            "placements": [{"instances": k, "contexts": list(c), "kind": kd, "measured_pps": m,
                            "modelled_pps": float(p), "measured_reps_pps": v,
                            **({"corrected_reps_pps": cv} if rounds.corrected is not None else {})}
                           for (k, c), kd, m, p, v, cv in zip(placements, kinds, measured, pred, values,
                                                              rounds.corrected or values)],
            **({"drift": drift} if drift is not None else {}),
            "median_abs_err_pct": float(np.median(err)),
            "noise_cv_pct_median_raw": noise_of(values),
            # what makes this file less to be trusted (validate repeats them); [] when none
            "warnings": warnings,
            "pressure_point": char.get("pressure_point"),
            "characterization": {"roles": {r: {"cycles_per_packet": char["roles"][r]["cycles_per_packet"]}
                                           for r in ROLES}, "tsc_hz": char["timer"]["tsc_hz"],
                                 # each context's speed over 100 ms windows, alone (older files lack it)
                                 **{f"{key}_cv_pct": {c: v["alone"]["cv_pct"]
                                                      for c, v in char[key]["contexts"].items()}
                                    for key in ("steadiness", "steadiness_memory") if key in char},
                                 **({"steadiness_handoff_cv_pct": {p: v["cv_pct"] for p, v in
                                                                   char["steadiness_handoff"]["pairs"].items()}}
                                    if "steadiness_handoff" in char else {})},
        },
    }
