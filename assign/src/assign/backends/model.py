"""The model backend: a documented performance predictor (see assign/MODEL.md).

Its numbers are predictions, labelled "modelled" everywhere they appear.

For task i of a workload on context v_i (levels pu, pipeline, core, chip):

    total_l(i) = sum of demand_l(j) over all tasks j sharing level l with i
                 (i included; demands are fractions of the level's capacity)
    slowdown_i = prod_l (1 + sensitivity_l(i) * max(0, total_l(i) - 1)
                           + residual_l * (total_l(i) - demand_l(i)))
    comm_i     = sum over the stage neighbours j of i of comm_ns[dist(v_i, v_j)]
    cost_i     = base_ns(i) * slowdown_i + comm_i          (ns per packet)
                 + return_ns * remote(v_i) for an R task (_remote_buffers: the
                 share of its buffers that come back from another context)
                 + transit_ns * its share of buffers through the pool's common
                 store for an R or T task (_pool_transit; for the R task only
                 with "transit_sides": "gets"); an R task's slowdown
                 also has a factor 1 + rx_crowding per other R task on its context

where dist is the lowest level the two contexts share (with "fusion": true,
an instance whose three tasks share one context pays none: the runtime
polls them as one, without rings).  An instance runs at
the rate of its slowest task, 1e9 / max cost (packets/s); the workload's
throughput is the sum over instances, times (1 + noise) with noise drawn
from N(0, noise_rel_sd) clipped at 3 sd, a function of (seed, draw index)
(sampling.normals).  With "throughput": "equal-packets" (what assign calibrate
writes: its measurements are --packets windows, the same packet count per
instance) the throughput is the number of instances times the slowest
instance's rate: all their packets over the time the slowest one takes.
"""
from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..sampling import normals
from ..store import json_rows
from ..topology import LEVELS, Topology
from .base import Batch, MeasureRequest, Result
from ..workloads import ROLES, Workload

PARAMS_FILE = "model_params.json"
CONTENTION_LEVELS = ("pu", "pipeline", "core", "chip")


class ModelError(ValueError):
    """Bad model parameters."""


@dataclass(frozen=True)
class ModelParams:
    base_ns: np.ndarray       # (3,) per role R, P, T
    demand: np.ndarray        # (levels, 3)
    sensitivity: np.ndarray   # (levels, 3)
    residual: np.ndarray      # (levels,) slowdown per unit of co-runner demand below capacity
    comm_ns: np.ndarray       # (len(LEVELS),) cost per packet by distance
    noise_rel_sd: float
    pu_timeshare: bool = False  # "pu_sharing": "timeshare": tasks on one context add their costs
    span_factor: float = 1.0    # an instance's rate times span_factor ** (its distinct contexts - 1)
    context_share: dict | None = None  # PU os_index -> share of its time the tasks get (other load takes the rest)
    fusion: bool = False  # an instance with R, P and T on one context runs as one poll: no communication cost
    # "throughput": "equal-packets": every instance forwards the same number of packets (the dpdk
    # backend's --packets window), so the workload's rate is all their packets over the time the
    # slowest instance takes: instances x the slowest one's rate.  "sum" (absent): their rates added
    equal_packets: bool = False
    # "return_ns": what an R task pays per packet for a buffer from another context (see predict)
    return_ns: float = 0.0
    # "transit_ns": what a buffer costs on each side when it moves between contexts through the
    # pool's common store (see predict)
    transit_ns: float = 0.0
    # "rx_crowding": what an R task's cost grows by, as a fraction, per R task of another instance on
    # its context (see predict)
    rx_crowding: float = 0.0
    # "transit_sides": "both" (absent): transit_ns on the R side of the common store and on the T
    # side; "gets": on the R side only (a T's cost does not move with its context's surplus)
    transit_puts: bool = True
    # "span_rt": what an instance split over two contexts, R and T on one and P on the other, runs
    # at in place of span_factor (see predict); absent, span_factor prices it like any other split
    span_rt: float | None = None

    @staticmethod
    def from_dict(d: dict, where: str) -> "ModelParams":
        try:
            roles = d["roles"]
            base = np.array([float(roles[r]["base_ns"]) for r in ROLES])
            demand = np.array([[float(roles[r]["demand"].get(lvl, 0.0)) for r in ROLES] for lvl in CONTENTION_LEVELS])
            sens = np.array([[float(roles[r]["sensitivity"].get(lvl, 0.0)) for r in ROLES] for lvl in CONTENTION_LEVELS])
            resid = np.array([float(d.get("residual", {}).get(lvl, 0.0)) for lvl in CONTENTION_LEVELS])
            comm = np.array([float(d["comm_ns"][lvl]) for lvl in LEVELS])
            noise = float(d.get("noise_rel_sd", 0.0))
            span = float(d.get("span_factor", 1.0))
            if not 0 < span <= 1:
                raise ValueError(f"span_factor {span} (expected 0 < span_factor <= 1)")
            share = {int(k): float(v) for k, v in d.get("context_share", {}).items()} or None
            if share and not all(0 < v <= 1 for v in share.values()):
                raise ValueError("context_share values must be in (0, 1]")
            fusion = d.get("fusion", False)
            if not isinstance(fusion, bool):
                raise ValueError(f"fusion {fusion!r} (expected true or false)")
            sharing = d.get("pu_sharing", "demand")
            if sharing not in ("demand", "timeshare"):
                raise ValueError(f"pu_sharing {sharing!r} (known: demand, timeshare)")
            throughput = d.get("throughput", "sum")
            if throughput not in ("sum", "equal-packets"):
                raise ValueError(f"throughput {throughput!r} (known: sum, equal-packets)")
            return_ns = float(d.get("return_ns", 0.0))
            if not return_ns >= 0:
                raise ValueError(f"return_ns {return_ns} (expected >= 0)")
            transit_ns = float(d.get("transit_ns", 0.0))
            if not transit_ns >= 0:
                raise ValueError(f"transit_ns {transit_ns} (expected >= 0)")
            sides = d.get("transit_sides", "both")
            if sides not in ("both", "gets"):
                raise ValueError(f"transit_sides {sides!r} (known: both, gets)")
            rx_crowding = float(d.get("rx_crowding", 0.0))
            if not rx_crowding >= 0:
                raise ValueError(f"rx_crowding {rx_crowding} (expected >= 0)")
            span_rt = None if d.get("span_rt") is None else float(d["span_rt"])
            if span_rt is not None and not 0 < span_rt <= 1:
                raise ValueError(f"span_rt {span_rt} (expected 0 < span_rt <= 1)")
        except (KeyError, TypeError, ValueError) as e:
            raise ModelError(f"model parameters {where}: missing or bad entry {e}") from None
        if (base <= 0).any() or (demand < 0).any() or (sens < 0).any() or (resid < 0).any() or (comm < 0).any() or noise < 0:
            raise ModelError(f"model parameters {where}: costs must be > 0, demands/sensitivities/noise >= 0")
        return ModelParams(base, demand, sens, resid, comm, noise, sharing == "timeshare", span, share, fusion,
                           throughput == "equal-packets", return_ns, transit_ns, rx_crowding, sides == "both",
                           span_rt)


def params_digest(p: ModelParams) -> str:
    """The first 16 hex digits of the SHA-256 of every parameter's value: what identifies a
    model, wherever its file lies."""
    fields = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(p).items()}
    # a term added later counts only where set, so that a model from before it keeps its digest
    # and its stored runs continue
    for late in ("return_ns", "transit_ns", "rx_crowding"):
        if fields[late] == 0.0:
            del fields[late]
    if fields["transit_puts"]:
        del fields["transit_puts"]
    if fields["span_rt"] is None:
        del fields["span_rt"]
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load_params(workload: str, path: str | None = None, topo: Topology | None = None) -> ModelParams:
    """Parameters of one workload from the packaged data file (or `path`).
    A file written by `assign calibrate` names the workload and machine it
    was fitted for ("calibrated_for"); with `topo`, another machine's or
    another workload's file is refused."""
    if path is None:
        text = resources.files("assign").joinpath("data", PARAMS_FILE).read_text()
        where = f"(packaged {PARAMS_FILE})"
    else:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            raise ModelError(f"cannot read model parameters {path}: {e.strerror}") from None
        where = path
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(f"model parameters {where}: invalid JSON at line {e.lineno}: {e.msg}") from None
    cal = data.get("calibrated_for") if isinstance(data, dict) else None
    if cal is not None:
        if cal.get("workload") != workload:
            raise ModelError(f"model parameters {where} were calibrated for workload {cal.get('workload')!r}, "
                             f"not {workload!r} (run assign calibrate --workload {workload})")
        if topo is not None and cal.get("machine") != topo.to_json()["tree"]:
            raise ModelError(f"model parameters {where} were calibrated for another machine (hwloc topology "
                             f"{cal.get('machine_summary', '?')}), not machine {topo.name} ({topo.summary()}); "
                             f"calibrate on this machine, or leave out --model-params")
    if workload not in data.get("workloads", {}):
        raise ModelError(f"model parameters {where} have no entry for workload {workload!r} (a workload of your "
                         f"own: fit them with assign calibrate --workload-file FILE --out PARAMS on the machine, "
                         f"then --model-params PARAMS)")
    params = ModelParams.from_dict(data["workloads"][workload], f"{where} [{workload}]")
    if cal is not None and path not in _WARNED:
        # what calibrate said about the file (a noisy calibration): every figure modelled from it inherits it
        from ..characterize.trust import stored_warnings

        _WARNED.add(path)
        for w in stored_warnings(data.get("calibration") or {}):
            print(f"assign: warning: model parameters {where}: {w}", file=sys.stderr)
    return params


_WARNED: set[str] = set()  # parameter files whose calibration warnings this process printed


class ModelBackend:
    """Predicts the throughput (packets/s) of assignments; kind "modelled"."""

    name = "model"
    kind = "modelled"
    batch_size = 4096  # cheap to evaluate: a batch is evaluated at once and stored in one commit

    def __init__(self, topo: Topology, workload: Workload, params: ModelParams | None = None,
                 noise_rel_sd: float | None = None, seed: int = 0):
        self.topo = topo
        self.workload = workload
        self.params = params or load_params(workload.name)
        self.noise = self.params.noise_rel_sd if noise_rel_sd is None else noise_rel_sd
        if self.noise < 0:
            raise ModelError(f"noise must be >= 0, got {self.noise}")
        self.seed = seed
        self._index_of_os = {int(o): i for i, o in enumerate(topo.os_index)}
        n = workload.n_tasks
        roles = np.arange(n) % 3
        self._base = self.params.base_ns[roles]
        self._demand = self.params.demand[:, roles]
        self._sens = self.params.sensitivity[:, roles]
        self._level_index = [LEVELS.index(lvl) for lvl in CONTENTION_LEVELS]

    def describe(self) -> dict:
        d: dict = {"noise_rel_sd": self.noise}
        # parameters other than the packaged ones (--model-params) make another run; the packaged
        # ones leave the identity as it was before this key, so runs stored then continue
        mine = params_digest(self.params)
        if mine != params_digest(load_params(self.workload.name)):
            d["model_params_sha256"] = mine
        return d

    def predict(self, ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free throughput (B,) and per-task cost in ns (B, T) for
        assignments given as context indices (B, T)."""
        ctx = np.atleast_2d(np.asarray(ctx, dtype=np.int64))
        b, t = ctx.shape
        if t != self.workload.n_tasks:
            raise ModelError(f"assignment has {t} tasks, workload {self.workload.name} has {self.workload.n_tasks}")
        ids = self.topo.level_ids
        n_ids = int(ids.max()) + 1
        row_offset = (np.arange(b, dtype=np.int64) * n_ids)[:, None]
        slowdown = np.ones((b, t))
        for k, lvl in enumerate(self._level_index):
            if self.params.pu_timeshare and CONTENTION_LEVELS[k] == "pu":
                continue  # the context's time is shared below, not scaled
            group = ids[lvl][ctx] + row_offset
            d = np.broadcast_to(self._demand[k], (b, t))
            total = np.bincount(group.ravel(), weights=d.ravel(), minlength=b * n_ids)[group]
            if self.params.pu_timeshare:
                # tasks on one context take turns: only tasks on other contexts contend with i
                same = ids[0][ctx] + row_offset
                total = total - np.bincount(same.ravel(), weights=d.ravel(), minlength=b * n_ids)[same] + d
            overload = np.maximum(total - 1.0, 0.0)
            slowdown *= 1.0 + self._sens[k] * overload + self.params.residual[k] * (total - d)
        if self.params.rx_crowding > 0:
            # R tasks of several instances on one context: each port's replay and buffers
            # evict the others' from the context's caches (analyzer's R, 2026-11-25: 81 cycles
            # per packet fused alone, 188 with a second fused instance on its context)
            r = ids[0][ctx[:, 0::3]] + row_offset
            n_r = np.bincount(r.ravel(), minlength=b * n_ids)[r]
            slowdown[:, 0::3] *= 1.0 + self.params.rx_crowding * (n_r - 1)
        cost = self._base * slowdown
        comm = self.params.comm_ns
        # fusion: R, P and T of an instance on one context hand packets over without a ring
        unfused = (~((ctx[:, 0::3] == ctx[:, 1::3]) & (ctx[:, 1::3] == ctx[:, 2::3]))
                   if self.params.fusion else None)
        for src in (0, 1):  # R->P and P->T of every instance
            a = ctx[:, src::3]
            c = ctx[:, src + 1::3]
            pay = comm[self.topo.distance(a, c)]
            if unfused is not None:
                pay = pay * unfused
            cost[:, src::3] += pay
            cost[:, src + 1::3] += pay
        if self.params.return_ns > 0:
            cost[:, 0::3] += self.params.return_ns * self._remote_buffers(ctx, row_offset, n_ids)
        if self.params.transit_ns > 0:
            gets, puts = self._pool_transit(ctx, row_offset, n_ids)
            cost[:, 0::3] += self.params.transit_ns * gets
            if self.params.transit_puts:
                cost[:, 2::3] += self.params.transit_ns * puts
        if self.params.pu_timeshare:
            # round-robin polling: a context serves one burst of each of its
            # tasks in turn, so each of them waits for the work of all
            group = ids[0][ctx] + row_offset
            cost = np.bincount(group.ravel(), weights=cost.ravel(), minlength=b * n_ids)[group]
        if self.params.context_share:
            share = np.array([self.params.context_share.get(int(o), 1.0) for o in self.topo.os_index])
            cost = cost / share[ctx]
        if self.params.span_factor != 1.0 or self.params.span_rt is not None:
            # an instance spread over k contexts runs k-1 factors slower: its stages make
            # progress only while all of their contexts run them (other load time-slices each)
            c3 = ctx.reshape(b, -1, 3)
            k = 1 + (c3[..., 1] != c3[..., 0]) + ((c3[..., 2] != c3[..., 0]) & (c3[..., 2] != c3[..., 1]))
            f = self.params.span_factor ** (k - 1)
            if self.params.span_rt is not None:
                # R and T on one context, P on another: the runtime's split T owns the lines of
                # the buffers its context's R refills next (runtime/pp_task.c, own_freed_lines),
                # which no other split shape gets; measured faster than the others (ipfwd-l1,
                # 2026-11-26: bench/ipfwd.py P alone +14%), so it gets a factor of its own
                f = np.where((k == 2) & (c3[..., 0] == c3[..., 2]), self.params.span_rt, f)
            cost = cost / np.repeat(f, 3, axis=1)
        slowest = cost.reshape(b, -1, 3).max(axis=2)
        rate = 1e9 / slowest
        throughput = rate.shape[1] * rate.min(axis=1) if self.params.equal_packets else rate.sum(axis=1)
        return throughput, cost

    def _remote_buffers(self, ctx: np.ndarray, row_offset: np.ndarray, n_ids: int) -> np.ndarray:
        """(B, instances): the share of the buffers each R task's port fills that come from
        another context.  The instances share one buffer pool with a cache per context: T
        frees into its context's cache and R takes from its own.  A context's R tasks get
        the buffers its T tasks freed, up to as many as they need (the rest come from the
        other contexts); of those, the ones whose P ran on another context wrote their
        headers there.  Either way R's port rewrites cache lines another context holds."""
        b = ctx.shape[0]
        r, p, t = ctx[:, 0::3] + row_offset, ctx[:, 1::3], ctx[:, 2::3] + row_offset
        size = b * n_ids
        n_r = np.bincount(r.ravel(), minlength=size)
        n_f = np.bincount(t.ravel(), minlength=size)
        n_fd = np.bincount(t.ravel(), weights=(p != ctx[:, 2::3]).ravel().astype(float), minlength=size)
        local = np.minimum(n_f, n_r)
        dirty = np.divide(n_fd, n_f, out=np.zeros(size), where=n_f > 0)
        remote = np.divide(local * dirty + np.maximum(n_r - n_f, 0), n_r, out=np.zeros(size), where=n_r > 0)
        return remote[r]

    def _pool_transit(self, ctx: np.ndarray, row_offset: np.ndarray, n_ids: int) -> tuple[np.ndarray, np.ndarray]:
        """(B, instances) twice: the share of each R task's buffers that its context's cache
        must take from the pool's common store, and the share of each T task's that its
        context's cache must give back to it.  A context with more R than T tasks allocates
        more buffers than it frees, and the difference crosses the common store (a lock and
        lines that other contexts wrote); a context with more T than R frees the surplus there."""
        r, t = ctx[:, 0::3] + row_offset, ctx[:, 2::3] + row_offset
        size = ctx.shape[0] * n_ids
        n_r = np.bincount(r.ravel(), minlength=size).astype(float)
        n_t = np.bincount(t.ravel(), minlength=size).astype(float)
        gets = np.divide(np.maximum(n_r - n_t, 0), n_r, out=np.zeros(size), where=n_r > 0)
        puts = np.divide(np.maximum(n_t - n_r, 0), n_t, out=np.zeros(size), where=n_t > 0)
        return gets[r], puts[t]

    def _noise(self, keys: Sequence[int]) -> np.ndarray:
        if self.noise == 0:
            return np.zeros(len(keys))
        return np.clip(normals(self.seed, np.asarray(keys, dtype=np.int64)), -3.0, 3.0) * self.noise

    def contexts_of(self, os_indices: Sequence[int]) -> list[int]:
        try:
            return [self._index_of_os[int(o)] for o in os_indices]
        except KeyError as e:
            raise ModelError(f"context {e.args[0]} is not a PU os_index of machine {self.topo.name}") from None

    def _context_array(self, requests: Sequence[MeasureRequest]) -> np.ndarray:
        """Context indices (B, T) of the requests' PU os_index lists."""
        os_idx = np.array([r.contexts for r in requests], dtype=np.int64)
        lut = np.full(int(max(self.topo.os_index.max(), os_idx.max())) + 1, -1, dtype=np.int64)
        lut[self.topo.os_index] = np.arange(self.topo.n_contexts)
        ctx = lut[np.maximum(os_idx, 0)]
        bad = (ctx < 0) | (os_idx < 0)
        if bad.any():
            raise ModelError(f"context {int(os_idx[bad][0])} is not a PU os_index of machine {self.topo.name}")
        return ctx

    def _evaluate(self, idx: Sequence[int], ctx: np.ndarray) -> tuple[list[float], np.ndarray, list[str]]:
        """Values (noise included), per-instance packets/s in tenths (integers)
        and bottleneck roles of a batch."""
        value, cost = self.predict(ctx)
        value = (value * (1.0 + self._noise(idx))).tolist()
        per = cost.reshape(len(value), -1, 3)
        pps_tenths = np.rint(1e10 / per.max(axis=2)).astype(np.int64)
        bottleneck = ["".join(row) for row in np.array(ROLES)[per.argmax(axis=2)].tolist()]
        return value, pps_tenths, bottleneck

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        if not requests:
            return []
        value, pps_tenths, bottleneck = self._evaluate([r.idx for r in requests], self._context_array(requests))
        pps = (pps_tenths / 10.0).tolist()
        return [Result(value=v, extra={"instance_pps": p, "bottleneck": bn})
                for v, p, bn in zip(value, pps, bottleneck)]

    def measure_array(self, idx: Sequence[int], ctx: np.ndarray) -> Batch:
        """measure() for a batch given as arrays, the extras as JSON: one encoding
        of the whole batch's figures, split per draw (a million draws in seconds)."""
        value, pps_tenths, bottleneck = self._evaluate(idx, ctx)
        rows = json_rows(pps_tenths, ",", tenths=True)
        return Batch(value, [f'{{"instance_pps":[{r}],"bottleneck":"{b}"}}' for r, b in zip(rows, bottleneck)])
