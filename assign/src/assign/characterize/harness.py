"""The measured runs of `assign characterize`.

One instance (R, P, T) of the workload runs with the real app of a build
made with `-Dprofile=true` (runtime/pp_profile.h), whose statistics give
each task's TSC cycles by category.  With contexts a (the first of the
machine) and b_L (a context sharing level L with a, for each level the
topology offers):

  baseline      R, P, T all on a, nothing else running anywhere: each
                role's work cycles per packet (receive + ring + process +
                transmit, the profile floor subtracted), repeated until the
                95% CI half-width is <= the target or the repetition cap
  pu, role Y    X and Y on a, the third role on another context: the
                instance's throughput ratio, baseline / this
  L, role Y     X and the third role on a, Y on b_L: the instance's
                throughput ratio, baseline / this (a role's own cycles per
                packet are no measure here: with its neighbour running
                beside it, its bursts fill less and per-burst costs spread
                over fewer packets, though it is not slower)
  pu, stressor  baseline placement and pp-stressor on a: throughput ratio
                (the stressor takes a's time through the OS scheduler)
  L, stressor   baseline placement and pp-stressor on b_L: W_X / W0_X, X's
                own work cycles per packet (bursts fill as in the baseline)

Every figure is measured; the slowdowns are ratios of measured figures.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..backends.base import BackendError
from ..backends.dpdk.backend import DpdkBackend
from ..backends.dpdk.options import DpdkOptions
from ..topology import LEVELS, Topology
from ..workloads import ROLES, Workload
from .probes import STRESSORS, Stressor, handoff_steadiness, steadiness, timer_floor

CATEGORIES = ("empty_poll", "receive", "ring", "process", "transmit", "backpressure_wait")
WORK = ("receive", "ring", "process", "transmit")
# profile marks in a poll that moved packets, by role (runtime/pp_task.c)
MARKS_PER_BUSY_POLL = {"R": 2, "P": 3, "T": 2}
PRESSURE_WORDS = {"mem": "memory", "compute": "compute", "role": "neighbours"}
NOISE_FLOOR_PCT = 1.0  # no single run's figure is taken as steadier than this


@dataclass
class Settings:
    build: Path
    packets: int = 200_000          # window per run, packets of the instance
    min_reps: int = 3
    max_reps: int = 10
    target_ci_pct: float = 1.0
    runs: list[dict] = field(default_factory=list)  # wall and window of every run (the harness's overhead)
    rules: Path | None = None       # ahocorasick: the rule set (None: the app's default)
    capture_packets: int | None = None  # packets per replayed capture (None: the generator's default)


def ci_halfwidth_pct(values: list[float]) -> float:
    """95% confidence half-width of the mean, in percent of the mean (t distribution)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2 or v.mean() == 0:
        return math.inf
    return float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size) / v.mean() * 100.0)


class Harness:
    def __init__(self, topo: Topology, workload: str, settings: Settings):
        self.topo = topo
        self.s = settings
        self.workload = Workload(workload, 1)
        self.backend = DpdkBackend(topo, self.workload,
                                   DpdkOptions(build_dir=settings.build, packets=settings.packets, warmup=0.0,
                                               rules=settings.rules, capture_packets=settings.capture_packets))
        os_idx = [int(o) for o in topo.os_index]
        self.a = os_idx[0]
        # one context per level it shares with a (the first found), lowest level first
        dist = topo.distance(np.zeros(len(os_idx), dtype=np.int64), np.arange(len(os_idx)))
        self.level_ctx: dict[str, int] = {}
        for i in range(1, len(os_idx)):
            self.level_ctx.setdefault(LEVELS[int(dist[i])], os_idx[i])
        self.away = os_idx[int(np.argmax(dist))] if len(os_idx) > 1 else None
        # what the runtime counts per task: a packet, or for a workload fed by a client (the TCP apps)
        # a message R hands on (netdedup: a coarse chunk); the JSON keys keep "packet"
        self.item = "packet" if getattr(self.backend, "client", None) is None else "message"
        self.floor: dict = {}
        self._pair_cache: dict[tuple[int, int, int], dict[str, dict]] = {}

    def close(self) -> None:
        self.backend.close()

    # one run ---------------------------------------------------------------
    def run(self, contexts: tuple[int, int, int], what: str) -> dict:
        doc = self.backend.placement(list(contexts))
        why = ""
        for _ in (1, 2, 3):  # a window starved by other load on a shared machine is retried
            t0 = time.monotonic()
            out = self.backend.runner.run(doc, self.backend.opts.timeout_s())
            wall = time.monotonic() - t0
            why = out.error or self.backend._check(out.stats, doc, out.client)
            if why is None:
                stats = out.stats
                if "profile" not in stats["tasks"][0]:
                    raise BackendError(f"characterize: the app of build {self.s.build} has no per-category "
                                       f"profile: use a build configured with -Dprofile=true "
                                       f"(tools/setup.sh --asan makes build-profile/)")
                self.s.runs.append({"what": what, "wall_s": round(wall, 4),
                                    "window_s": float(stats.get("duration_s", 0.0)), "kind": "measured"})
                return stats
        raise BackendError(f"characterize: run {what} on contexts {contexts} failed 3 times: {why}")

    def pair_run(self, contexts: tuple[int, int, int], what: str) -> dict[str, dict]:
        """roles_of one run per placement: X+Y and Y+X on one context (pu), and X+Y and Z+Y
        beside it, are the same placement, measured once (the figure is the instance's)."""
        if contexts not in self._pair_cache:
            self._pair_cache[contexts] = self.roles_of(self.run(contexts, what))
        return self._pair_cache[contexts]

    def roles_of(self, stats: dict) -> dict[str, dict]:
        """Per role of instance 0: work cycles per packet (floor subtracted),
        the breakdown per packet and the runtime's own busy-cycle counter."""
        mark = float(self.floor.get("mark_cycles", 0.0))
        out = {}
        for t in stats["tasks"]:
            if t["instance"] != 0:
                continue
            n = max(int(t["packets"]), 1)
            prof = t["profile"]
            per_poll = MARKS_PER_BUSY_POLL[t["role"]] * mark * max(int(t["bursts"]), 1) / n
            work = sum(prof[c] for c in WORK) / n - per_poll
            out[t["role"]] = {"work": work, "breakdown": {c: prof[c] / n for c in CATEGORIES},
                              "runtime_cycles": t["cycles"] / n, "floor": per_poll,
                              "pps": float(stats["total"]["pps"])}
        return out

    def app_stages(self, reps: list[dict | None]) -> dict | None:
        """The mean over the baseline's repetitions of an app's own per-stage figures
        (app_stats.stages: share and cycles_per_query, as netferret's P reports them),
        or None for an app without them."""
        if not reps or any(not r or "share" not in r or "cycles_per_query" not in r for r in reps):
            return None
        names = list(reps[0]["share"])
        return {"what": reps[0].get("what", ""), "kind": "measured", "repetitions": len(reps),
                "share": {k: float(np.mean([r["share"][k] for r in reps])) for k in names},
                f"cycles_per_{self.item}": {k: float(np.mean([r["cycles_per_query"][k] for r in reps]))
                                            for k in names}}

    # the characterization ------------------------------------------------------
    def characterize(self, log=print) -> dict:
        a = self.a
        self.floor = timer_floor(self.s.build, a)
        log(f"timer floor (measured on context {a}): TSC {self.floor['tsc_hz'] / 1e9:.3f} GHz, "
            f"one TSC read {self.floor['rdtsc_cycles']} cycles, empty loop {self.floor['loop_cycles']:.2f} "
            f"cycles/iteration, one profile mark {self.floor['mark_cycles']:.2f} cycles")
        used = list(dict.fromkeys([a, *self.level_ctx.values(), *([self.away] if self.away is not None else [])]))
        # the compute kernel misses the host's memory side, which moves a memory-bound workload alone
        self.steady = steadiness(self.s.build, used)
        self.steady_mem = steadiness(self.s.build, used, kernel="memory")
        for st, what, unit, f in ((self.steady, "a fixed integer kernel", "M steps/s", ".0f"),
                                  (self.steady_mem, "dependent loads over 64 MiB", "M loads/s", ".2f")):
            for c, v in st["contexts"].items():
                al, to = v["alone"], v["together"]
                log(f"context {c} steadiness (measured, {what} in {len(al['rates'])} windows of "
                    f"{st['window_s'] * 1000:g} ms): alone CV {al['cv_pct']:.1f}% "
                    f"({al['min']:{f}}-{al['max']:{f}}, median {al['median']:{f}} {unit}); with the other "
                    f"contexts running it too, CV {to['cv_pct']:.1f}%, median x{v['together_vs_alone']:.3f}: "
                    "no figure measured on this context is steadier")
        # an instance split over two contexts needs both running at once: a third kind of floor
        peers = [c for c in used if c != a]
        self.steady_handoff = handoff_steadiness(self.s.build, a, peers) if peers else None
        for pair, v in (self.steady_handoff or {}).get("pairs", {}).items():
            log(f"contexts {pair.replace('-', ' and ')} handoff steadiness (measured, one cache line passed "
                f"back and forth, {len(v['rates'])} windows of {self.steady_handoff['window_s'] * 1000:g} ms): "
                f"CV {v['cv_pct']:.1f}% ({v['min']:.3f}-{v['max']:.3f}, median {v['median']:.3f} M round "
                "trips/s): no placement that splits an instance over these contexts is steadier")
        base = (a, a, a)
        reps: list[dict] = []
        stage_reps: list[dict | None] = []
        while True:
            st = self.run(base, "baseline")
            reps.append(self.roles_of(st))
            stage_reps.append((st.get("app_stats") or {}).get("stages"))
            ci = {r: ci_halfwidth_pct([x[r]["work"] for x in reps]) for r in ROLES}
            if len(reps) >= self.s.min_reps and (max(ci.values()) <= self.s.target_ci_pct
                                                 or len(reps) >= self.s.max_reps):
                break
        w0 = {r: float(np.mean([x[r]["work"] for x in reps])) for r in ROLES}
        pps0 = float(np.mean([x["R"]["pps"] for x in reps]))
        roles = {}
        for r in ROLES:
            bd = {c: float(np.mean([x[r]["breakdown"][c] for x in reps])) for c in CATEGORIES}
            runtime = float(np.mean([x[r]["runtime_cycles"] for x in reps]))
            work_sum = sum(bd[c] for c in WORK)
            # each repetition's work sum against its own busy counter, then the median: an
            # interruption landing between the two clocks' readings moves one repetition by
            # up to its whole length, and a mean would carry it
            per_rep = [(sum(x[r]["breakdown"][c] for c in WORK) - x[r]["runtime_cycles"])
                       / x[r]["runtime_cycles"] * 100.0 for x in reps if x[r]["runtime_cycles"]]
            vs_runtime = float(np.median(per_rep)) if len(per_rep) == len(reps) else None
            roles[r] = {"cycles_per_packet": w0[r], "ci_halfwidth_pct": ci[r], "repetitions": len(reps),
                        "median_cycles_per_packet": float(np.median([x[r]["work"] for x in reps])),
                        "ci_target_met": ci[r] <= self.s.target_ci_pct,
                        "breakdown": bd, "total_cycles_per_packet": sum(bd.values()),
                        "runtime_busy_cycles_per_packet": runtime,
                        "breakdown_vs_runtime_pct": vs_runtime,
                        "floor_cycles_per_packet": float(np.mean([x[r]["floor"] for x in reps])),
                        "ns_per_packet": w0[r] / self.floor["tsc_hz"] * 1e9,
                        "kind": "measured"}
            log(f"{r}: {w0[r]:8.1f} cycles/{self.item} (measured, alone, profile floor "
                f"{roles[r]['floor_cycles_per_packet']:.1f} subtracted), 95% CI +-{ci[r]:.2f}% after "
                f"{len(reps)} repetitions" + ("" if ci[r] <= self.s.target_ci_pct else
                                              f" (cap reached, the {self.s.target_ci_pct:g}% target not met: "
                                              f"a larger --max-reps, now {self.s.max_reps}, or a steadier "
                                              "machine)"))
            log(f"    breakdown (measured, cycles/{self.item}): " + ", ".join(f"{c} {bd[c]:.1f}" for c in CATEGORIES)
                + f"; work {work_sum:.1f} vs the runtime's busy counter {runtime:.1f} "
                + (f"(median of the repetitions {vs_runtime:+.1f}%, "
                   f"{'within' if abs(vs_runtime) <= 5.0 else 'NOT within'} 5%)"
                   if vs_runtime is not None else "(no busy cycles)"))

        app_stages = self.app_stages(stage_reps)
        if app_stages is not None:
            log("P's stages alone (measured by the app around each stage, mean of the repetitions): " + ", ".join(
                f"{k} {v:.1%} ({app_stages['cycles_per_' + self.item][k]:,.0f} cycles)"
                for k, v in app_stages["share"].items()))

        sharing: dict[str, dict[str, float]] = {}
        others = {x: [r for r in ROLES if r != x] for x in ROLES}
        if self.away is not None:
            pu: dict[str, float] = {}
            for x in ROLES:
                for y in others[x]:
                    z = next(r for r in ROLES if r not in (x, y))
                    ctx = {x: a, y: a, z: self.away}
                    got = self.pair_run(tuple(ctx[r] for r in ROLES), f"pu {x}+{y}")
                    pu[f"{x}+{y}"] = pps0 / got[x]["pps"]
            sharing["pu"] = pu
        for kind in STRESSORS:
            with Stressor(self.s.build, kind, a):
                got = self.roles_of(self.run(base, f"pu {kind} stressor"))
            for x in ROLES:
                sharing.setdefault("pu", {})[f"{x}+{kind}"] = pps0 / got[x]["pps"]
        for level, b in self.level_ctx.items():
            lv: dict[str, float] = {}
            for x in ROLES:
                for y in others[x]:
                    ctx = {r: a for r in ROLES}
                    ctx[y] = b
                    got = self.pair_run(tuple(ctx[r] for r in ROLES), f"{level} {x}+{y}")
                    lv[f"{x}+{y}"] = pps0 / got[x]["pps"]
            for kind in STRESSORS:
                with Stressor(self.s.build, kind, b):
                    got = self.roles_of(self.run(base, f"{level} {kind} stressor"))
                for x in ROLES:
                    lv[f"{x}+{kind}"] = got[x]["work"] / w0[x]
            sharing[level] = lv
        for level, pairs in sharing.items():
            log(f"sharing {level}, each role's figure beside the co-runner over alone (measured ratio; above "
                "1 slower, below 1 faster): " + ", ".join(f"{k} {v:.3f}" for k, v in pairs.items()))
        noise = role_noise_pct(reps)
        pressure, scores, beyond = pressure_point(sharing, noise)
        noise_txt = ", ".join(f"{r} {noise[r]:.1f}%" for r in ROLES)
        if pressure is None:
            log("pressure point: none. No co-runner slows a role beyond the noise of one run "
                f"({noise_txt}: twice the spread of the role's repetitions alone, at least "
                f"{NOISE_FLOOR_PCT:g}%); the ratios above stay as measured (mean by co-runner kind: "
                + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()) + ")")
        else:
            log(f"pressure point: {pressure} (mean ratio by co-runner kind, measured: "
                + ", ".join(f"{k} {v:.3f}" for k, v in scores.items())
                + f"; slowed beyond the noise of one run ({noise_txt}): "
                + "; ".join(f"{k}: {', '.join(v)}" for k, v in beyond.items()) + ")")
        rules = self.backend.opts.rules_identity()  # ahocorasick with --rules: calibrate checks it
        return {"workload": self.workload.name, "machine": self.topo.to_json()["tree"],
                "per": self.item,  # what the *_per_packet figures count: packet, or message
                **({"rules": rules} if rules else {}),
                # --capture-packets: calibrate checks it (absent: the generator's default)
                **({"capture_packets": self.s.capture_packets} if self.s.capture_packets else {}),
                "contexts": {"a": a, "levels": self.level_ctx, "away": self.away},
                "timer": self.floor, "steadiness": self.steady, "steadiness_memory": self.steady_mem,
                **({"steadiness_handoff": self.steady_handoff} if self.steady_handoff else {}),
                "roles": roles, "sharing": sharing,
                # an app that times the stages of its P itself (netferret: app_stats.stages)
                **({"app_stages": app_stages} if app_stages is not None else {}),
                "sharing_kind": "measured (ratio of measured figures)",
                # None: no co-runner slowed a role beyond the noise of one run
                "pressure_point": pressure, "pressure_scores": scores,
                "pressure_noise_pct": noise, "pressure_beyond_noise": beyond,
                "settings": {"packets": self.s.packets, "min_reps": self.s.min_reps,
                             "max_reps": self.s.max_reps, "target_ci_pct": self.s.target_ci_pct},
                "runs": self.s.runs}


def role_noise_pct(reps: list[dict]) -> dict[str, float]:
    """How far one run's figure of a role moves by chance, in %: twice the
    coefficient of variation of its repetitions alone (the larger of its work
    cycles' and its rate's), at least NOISE_FLOOR_PCT.  A co-run is one run,
    so a ratio within this of 1 is no evidence of a slowdown."""
    out = {}
    for r in ROLES:
        cvs = []
        for key in ("work", "pps"):
            v = np.array([x[r][key] for x in reps], dtype=float)
            if len(v) >= 2 and v.mean() > 0:
                cvs.append(float(v.std(ddof=1) / v.mean() * 100.0))
        out[r] = max(NOISE_FLOOR_PCT, 2.0 * max(cvs, default=0.0))
    return out


def pressure_point(sharing: dict[str, dict[str, float]], noise_pct: dict[str, float]
                   ) -> tuple[str | None, dict[str, float], dict[str, list[str]]]:
    """The co-runner kind (memory stressor, compute stressor, neighbouring
    roles) that slows the roles most on the levels beside the context: of
    the kinds that slow some role beyond the noise of one run (ratio above
    1 + noise_pct[role] / 100), the one with the highest mean ratio.  A
    ratio below 1 (the role ran faster beside it) is no pressure.  None when
    no kind slows any role beyond the noise; "context" when the machine has
    no level beside the context.  Also the mean ratio of every kind and,
    per kind, the "level role+co-runner" ratios beyond the noise."""
    scores: dict[str, list[float]] = {}
    beyond: dict[str, list[str]] = {}
    for level, pairs in sharing.items():
        if level == "pu":
            continue
        for key, v in pairs.items():
            role, other = key.split("+", 1)
            word = PRESSURE_WORDS.get(other, PRESSURE_WORDS["role"])
            scores.setdefault(word, []).append(v)
            if v > 1.0 + noise_pct.get(role, NOISE_FLOOR_PCT) / 100.0:
                beyond.setdefault(word, []).append(f"{level} {key} {v:.3f}")
    if not scores:
        return "context", {}, {}
    mean = {k: float(np.mean(v)) for k, v in scores.items()}
    if not beyond:
        return None, mean, {}
    return max(beyond, key=mean.get), mean, beyond
