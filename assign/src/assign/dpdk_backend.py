"""The `dpdk` backend: run the real app with each sampled placement on this
machine and measure its packets per second (kind "measured").

Protocol per assignment (assign/DPDK_BACKEND.md):
  placement JSON (contract 1) from the draw -> the app binary of the Meson
  build, fed by the embedded default traffic (dpdk_traffic.py, --traffic
  pcap) or by the traffic generator over net_memif (dpdk_tgen.py, --traffic
  tgen) -> warm-up
  (--warmup S, outside the window) -> window (--packets N per instance, the
  paper's 3 million by default, or --duration S) -> statistics JSON
  (contract 2).  The value is total.pps (transmitted packets per second of
  the window); per-instance and per-task figures and the measured wall time,
  window and overhead of the attempt go to Result.extra.

Failures (crash, non-zero exit, hang past the timeout, no packets in the
window, accounting check failed, tasks not where the placement put them)
are retried once; a second failure is stored as a failure with both
reasons, never as a value.
"""
from __future__ import annotations

import argparse
import os
import shutil
import uuid
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .argtypes import nonneg_number as _nonneg_float, positive_int as _pos_int
from .backend import BackendError, MeasureRequest, Result
from .dpdk_contexts import format_contexts
from .dpdk_run import Outcome, ProcessRunner, RunSpec, ServeRunner, serve_supported, workdir
from .dpdk_tgen import TgenTraffic, default_tgen_contexts
from .dpdk_traffic import TrafficError, build_traffic
from .placement import placement
from .topology import Topology
from .workloads import ROLES, Workload

PAPER_PACKETS = 3_000_000     # per instance, the paper's window (sec. 4.4)
DEFAULT_WARMUP_S = 0.2
SLOWEST_PPS = 25_000          # per instance: a --packets window slower than this counts as hung
TIMEOUT_MARGIN_S = 15.0       # start-up and tear-down allowance of the default timeout
RUNNERS = ("auto", "serve", "process")
TRAFFIC = ("pcap", "tgen")    # embedded pcap replay (default) | pp-tgen over net_memif
REPO = Path(__file__).resolve().parents[3]


def default_build_dir() -> Path:
    return Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")).resolve()


@dataclass
class DpdkOptions:
    """How each assignment is measured.  Everything but `runner`, `timeout`,
    `cache_dir` and `app_binary` identifies the run (stored as its params)."""

    build_dir: Path | None = None        # Meson build holding apps/<app>/<app>; default $PIPEPLACE_BUILD or build/
    packets: int | None = None           # window: packets per instance (default PAPER_PACKETS) ...
    duration: float | None = None        # ... or seconds
    warmup: float | None = None          # default: DEFAULT_WARMUP_S with duration, 0 with packets (see below)
    timeout: float | None = None         # per attempt; default from the window (see timeout_s)
    runner: str = "auto"                 # auto: serve when the binary has --serve, else a process per assignment
    capture_packets: int | None = None   # packets per replayed capture (default: per variant)
    contexts: list[int] | None = None    # the --contexts the topology was restricted to (identity only)
    traffic: str = "pcap"                # pcap: embedded replay; tgen: pp-tgen over net_memif
    tgen_contexts: list[int] | None = None  # tgen: the generator's contexts (default: the highest one)
    cache_dir: Path | None = None        # where generated captures are kept
    app_binary: Path | None = None       # TEST ONLY: run this instead of the build's app (fake crash/hang)

    def __post_init__(self) -> None:
        if self.packets is not None and self.duration is not None:
            raise BackendError("--packets and --duration: give one of them (the window is a packet count "
                               "per instance or a duration)")
        if self.packets is not None and self.packets < 1:
            raise BackendError(f"--packets {self.packets}: expected at least 1 packet per instance")
        if self.duration is not None and not self.duration > 0:
            raise BackendError(f"--duration {self.duration}: expected a positive number of seconds")
        if self.warmup is None:
            # the runtime counts --packets from the start of the run, so a warm-up would eat
            # into the packet window: the paper's 3 million are all measured.  Not with the
            # generator: its link comes up after the app's ports start, a gap the window must skip
            self.warmup = DEFAULT_WARMUP_S if self.duration is not None or self.traffic == "tgen" else 0.0
        if not self.warmup >= 0:
            raise BackendError(f"--warmup {self.warmup}: expected seconds >= 0")
        if self.timeout is not None and not self.timeout > 0:
            raise BackendError(f"--timeout {self.timeout}: expected a positive number of seconds")
        if self.runner not in RUNNERS:
            raise BackendError(f"--runner {self.runner!r}: expected one of {', '.join(RUNNERS)}")
        if self.packets is None and self.duration is None:
            self.packets = PAPER_PACKETS
        if self.traffic not in TRAFFIC:
            raise BackendError(f"--traffic {self.traffic!r}: expected one of {', '.join(TRAFFIC)}")
        if self.traffic == "tgen":
            if self.duration is not None:
                raise BackendError(
                    f"--traffic tgen with --duration {self.duration:g}: give --packets N instead. The generator "
                    f"sends exactly the window's packets and is idle before the app disconnects; with a timed "
                    f"window the app would leave while the generator still sends, which crashes DPDK 22.11's "
                    f"memif PMD (see assign/DPDK_BACKEND.md)")
            if self.tgen_contexts is None:
                self.tgen_contexts = default_tgen_contexts()
            if self.contexts is not None:
                both = sorted(set(self.contexts) & set(self.tgen_contexts))
                if both:
                    raise BackendError(
                        f"--contexts {format_contexts(self.contexts)} overlaps the traffic generator's "
                        f"context(s) {format_contexts(self.tgen_contexts)} (--tgen-contexts) in "
                        f"{format_contexts(both)}: tasks must not share a context with the generator "
                        f"(give --contexts without them, or move the generator with --tgen-contexts)")
        elif self.tgen_contexts is not None:
            raise BackendError(f"--tgen-contexts {format_contexts(self.tgen_contexts)}: only with --traffic tgen")

    def window_args(self) -> list[str]:
        w = ["--packets", str(self.packets)] if self.duration is None else ["--duration", repr(self.duration)]
        return w + ["--warmup", repr(self.warmup)]

    def timeout_s(self) -> float:
        if self.timeout is not None:
            return self.timeout
        window = 3 * self.duration if self.duration is not None else self.packets / SLOWEST_PPS
        return TIMEOUT_MARGIN_S + self.warmup + window

    def identity(self) -> dict:
        d = {"window": {"packets_per_instance": self.packets} if self.duration is None
             else {"duration_s": self.duration}, "warmup_s": self.warmup}
        if self.capture_packets is not None:
            d["capture_packets"] = self.capture_packets
        if self.contexts is not None:
            d["contexts"] = format_contexts(self.contexts)
        if self.traffic != "pcap":  # absent = pcap: runs stored before --traffic keep their identity
            d["traffic_source"] = self.traffic
            d["tgen_contexts"] = format_contexts(self.tgen_contexts)
        return d

    @staticmethod
    def from_params(params: dict, **overrides) -> "DpdkOptions":
        """Options of a stored run (its params), to measure more with the same protocol."""
        win = params.get("window", {})
        opts = dict(packets=win.get("packets_per_instance"), duration=win.get("duration_s"),
                    warmup=params.get("warmup_s"),
                    capture_packets=params.get("capture_packets"))
        from .dpdk_contexts import parse_contexts
        if "contexts" in params:
            opts["contexts"] = parse_contexts(params["contexts"], "the run's stored contexts")
        opts["traffic"] = params.get("traffic_source", "pcap")  # runs from before --traffic: pcap
        if "tgen_contexts" in params:
            opts["tgen_contexts"] = parse_contexts(params["tgen_contexts"], "the run's stored tgen_contexts")
        opts.update(overrides)
        return DpdkOptions(**opts)


class DpdkBackend:
    name = "dpdk"
    kind = "measured"
    batch_size = 1  # one real run at a time: two at once would measure each other

    def __init__(self, topo: Topology, workload: Workload, options: DpdkOptions | None = None,
                 allow_colocate: bool | None = None):
        """allow_colocate: the placement's flag; None sets it exactly when a
        draw puts two tasks on one context (the flag only permits sharing)."""
        if topo.name != "local":
            raise BackendError(f"backend dpdk runs the apps on this machine; machine {topo.name} is not it "
                               f"(use --machine local, or --backend model for a machine we do not have)")
        self.topo = topo
        self.workload = workload
        self.opts = options or DpdkOptions()
        self.allow_colocate = allow_colocate
        build = (self.opts.build_dir or default_build_dir()).resolve()
        if not (build / "build.ninja").exists():
            raise BackendError(f"backend dpdk: no Meson build at {build} (meson setup with "
                               f"-Dparts=runtime,{workload.app}, or set PIPEPLACE_BUILD)")
        self.build_dir = build
        binary = self.opts.app_binary or build / "apps" / workload.app / workload.app
        if not Path(binary).is_file():
            raise BackendError(f"backend dpdk: app {workload.app} is not built: {binary} does not exist "
                               f"(ninja -C {build})")
        self.binary = Path(binary)
        cache = self.opts.cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / \
            "pipeplace" / "assign-dpdk"
        prefix = "asg" + uuid.uuid4().hex[:10]
        wdir = workdir(prefix)
        self.tgen: TgenTraffic | None = None
        try:
            if self.opts.traffic == "tgen":
                self.traffic = self.tgen = TgenTraffic(build, workload, list(self.opts.tgen_contexts), wdir)
            else:
                self.traffic = build_traffic(build, workload, Path(cache), self.opts.capture_packets)
        except TrafficError as e:
            shutil.rmtree(wdir, ignore_errors=True)
            raise BackendError(f"backend dpdk: {e}") from None
        spec = RunSpec(self.binary,
                       ["--no-pci", "--log-level", "lib.eal:warning"]
                       + [a for v in self.traffic.vdevs for a in ("--vdev", v)],
                       self.opts.window_args(),
                       ["--mbufs", str(self.traffic.mbufs), "--mbuf-size", str(self.traffic.mbuf_size)],
                       prefix, wdir)
        mode = self.opts.runner
        if mode == "auto":
            mode = "serve" if serve_supported(self.binary) else "process"
        if mode == "serve" and self.opts.runner == "serve" and not serve_supported(self.binary):
            raise BackendError(f"--runner serve: {self.binary} --help does not list --serve "
                               f"(use --runner process)")
        self.runner: ProcessRunner | ServeRunner = ServeRunner(spec) if mode == "serve" else ProcessRunner(spec)
        # the serve process, the generator and the work directory go with the backend, or at the
        # latest at exit; the app first: the generator must not be the side that leaves a live link
        self._finalizer = weakref.finalize(self, _close, self.runner, self.tgen)

    # Backend protocol ------------------------------------------------------
    def describe(self) -> dict:
        d = {"app": self.workload.app, "variant": self.workload.variant, "kind": "measured",
             "value": "total.pps: transmitted packets per second of the window",
             "traffic": self.traffic.describe()}
        d.update(self.opts.identity())
        return d

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        return [self.measure_one(r.contexts) for r in requests]

    # ------------------------------------------------------------------------
    def placement(self, contexts: Sequence[int]) -> dict:
        colocate = self.allow_colocate
        if colocate is None:
            colocate = len(set(contexts)) < len(contexts)
        return placement(self.workload, contexts, colocate)

    def measure_one(self, contexts: Sequence[int]) -> Result:
        """Measure one assignment (task t on PU os_index contexts[t]); one retry."""
        return self.measure_placement(self.placement(contexts))

    def measure_placement(self, doc: dict) -> Result:
        reasons: list[str] = []
        for attempt in (1, 2):
            if self.tgen is not None:
                gone = self.tgen.start(self.opts.packets)  # one generator per assignment: see dpdk_tgen.py
                if gone is not None:
                    reasons.append(f"attempt {attempt}: {gone}")
                    continue
            out = self.runner.run(doc, self.opts.timeout_s())
            why = out.error or self._check(out.stats, doc)
            if why is None:
                extra = self._extra(out)
                extra["attempts"] = attempt
                if reasons:
                    extra["retried_after"] = reasons[0]
                if self.tgen is not None:
                    # the app's link is down: the generator, idle since its last packet, leaves
                    figures, gen_why = self.tgen.finish()
                    extra["traffic"]["generator_tx"] = dict(figures, kind="measured")
                    # measured, outside the app's wall_s: the generator's start and exit
                    extra["traffic"]["generator_start_s"] = round(self.tgen.start_s, 6)
                    extra["traffic"]["generator_exit_s"] = round(self.tgen.exit_s, 6)
                    if gen_why is not None:  # after the window: the app's figures stand, the note says it
                        extra["traffic"]["generator_exit"] = gen_why
                return Result(float(out.stats["total"]["pps"]), extra=extra)
            if isinstance(self.runner, ServeRunner):
                self.runner.restart()
            gen = self.tgen.abort() if self.tgen is not None else None
            reasons.append(f"attempt {attempt}: {why}" + (f"; {gen}" if gen else ""))
        return Result.failed("; ".join(reasons), {"kind": "measured", "attempts": 2, "runner": self.runner.mode,
                                                  "traffic": self._traffic_extra()})

    def _traffic_extra(self) -> dict:
        """Which traffic source fed the app, labelled."""
        if self.tgen is not None:
            return {"source": "tgen", "label": self.tgen.label(), "generator_starts": self.tgen.starts,
                    "generator_contexts": list(self.tgen.contexts)}
        return {"source": "pcap", "label": "pcap: net_pcap infinite_rx replay from memory inside R, "
                                           "app tx into net_null"}

    def _check(self, stats: dict | None, doc: dict) -> str | None:
        """Why these statistics are not a measurement of `doc`, or None."""
        try:
            if stats.get("kind") != "measured":
                return f"statistics kind is {stats.get('kind')!r}, not 'measured'"
            if stats.get("accounting_ok") is not True:
                return "accounting check failed (rx != tx + dropped + queued)"
            total = stats["total"]
            if not total.get("pps", 0) > 0:
                before = total.get("tx_packets", 0)
                return (f"no packets forwarded in the window (pps {total.get('pps')})"
                        + (f"; {before} forwarded before it: the pipeline stalled (a task's context starved "
                           f"by other load?)" if before else ""))
            insts = stats["instances"]
            if len(insts) != len(doc["instances"]):
                return f"statistics list {len(insts)} instances, the placement {len(doc['instances'])}"
            idle = [i["index"] for i in insts if not i.get("tx_packets", 0) > 0]
            if idle:
                return f"no packets forwarded by instance(s) {', '.join(map(str, idle))}"
            for t in stats["tasks"]:
                want = doc["instances"][t["instance"]]["tasks"][t["role"]]
                if t["context"] != want:
                    return (f"task {t['role']}{t['instance']} ran on context {t['context']}, "
                            f"the placement says {want}")
        except (AttributeError, KeyError, TypeError, IndexError) as e:
            return f"statistics JSON lacks a field of contract 2 ({type(e).__name__}: {e})"
        return None

    def _extra(self, out: Outcome) -> dict:
        s = out.stats
        window = float(s.get("duration_s", 0.0))
        warm = self.opts.warmup
        return {
            "kind": "measured",
            "runner": self.runner.mode,
            "wall_s": round(out.wall_s, 6),
            "window_s": round(window, 6),
            "warmup_s": warm,
            "window_packets": s["total"].get("window_tx_packets"),
            # start-up, port set-up, drain, tear-down: everything that is not warm-up or window
            "overhead_s": round(max(0.0, out.wall_s - window - warm), 6),
            "notes": out.notes,
            "traffic": self._traffic_extra(),
            "instances": [{k: i.get(k) for k in ("index", "pps", "tx_packets", "dropped_packets",
                                                  "queued_packets")} for i in s["instances"]],
            "tasks": [{k: t.get(k) for k in ("instance", "role", "context", "packets", "bursts",
                                              "empty_polls", "cycles")} for t in s["tasks"]],
        }

    def close(self) -> None:
        """Stop the serve process (end of input: it finishes and exits), then the traffic generator,
        and remove temporary files."""
        self._finalizer()

    def __enter__(self) -> "DpdkBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _close(runner: ProcessRunner | ServeRunner, tgen: TgenTraffic | None) -> None:
    """The app first (its link goes down while the generator, which does not
    leave, still holds its side), then the generator, then the work directory."""
    if tgen is None:
        runner.close()
        return
    if isinstance(runner, ServeRunner):
        runner.stop()
    tgen.stop()
    runner.close()


def contexts_of(doc: dict, where: str) -> tuple[Workload, list[int], bool]:
    """Workload, contexts (R0 P0 T0 R1 ...) and co-location flag of a placement JSON."""
    from .workloads import WORKLOADS

    try:
        app, variant = doc["app"], doc.get("variant")
        name = next((n for n, (a, v) in WORKLOADS.items() if a == app and v == variant), None)
        if name is None:
            raise ValueError(f"{where}: app {app!r} variant {variant!r} is no workload assign knows "
                             f"({', '.join(WORKLOADS)})")
        insts = doc["instances"]
        if not isinstance(insts, list) or not insts:
            raise ValueError(f"{where}: \"instances\" must be a non-empty list")
        ctx = [int(i["tasks"][r]) for i in insts for r in ROLES]
    except (KeyError, TypeError) as e:
        raise ValueError(f"{where}: not a placement (contract 1, runtime/PLACEMENT.md): missing {e}") from None
    return Workload(name, len(insts)), ctx, bool(doc.get("allow_colocate", False))


# --- command-line wiring (cli.py calls these) ---------------------------------

def _pos_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return v






def add_dpdk_options(p: argparse.ArgumentParser, *, contexts: bool = True) -> None:
    """The options of the dpdk backend, as one argument group."""
    g = p.add_argument_group("dpdk backend (runs the real app; figures are measured)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--packets", type=_pos_int, metavar="N",
                   help=f"window: N packets per instance (default: {PAPER_PACKETS:,}, the paper's)")
    w.add_argument("--duration", type=_pos_float, metavar="S", help="window: S seconds instead of a packet count")
    g.add_argument("--warmup", type=_nonneg_float, default=None, metavar="S",
                   help=f"seconds run before the window, not measured (default: {DEFAULT_WARMUP_S} with --duration "
                        f"or --traffic tgen; 0 with --packets, whose count starts with the run, so a warm-up "
                        f"shortens that window)")
    g.add_argument("--timeout", type=_pos_float, metavar="S",
                   help=f"an attempt with no result after S seconds is killed and counts as hung (default: "
                        f"{TIMEOUT_MARGIN_S:g} s + warm-up + the window at {SLOWEST_PPS:,} packets/s per "
                        f"instance, or 3 x --duration)")
    g.add_argument("--runner", choices=RUNNERS, default="auto",
                   help="serve: one persistent app process re-pinned per assignment; process: one app process "
                        "per assignment (default: auto, serve when the app supports --serve)")
    g.add_argument("--build", metavar="DIR", help="Meson build with the apps (default: $PIPEPLACE_BUILD or build/)")
    if contexts:
        g.add_argument("--contexts", metavar="LIST",
                       help="hardware contexts (PU os_index) tasks may use, e.g. 0-1 or 2,4-7; leave out the "
                            "ones that run the traffic source or DPDK's main lcore (default: all; the embedded "
                            "pcap replay runs inside R and the main lcore sleeps, so neither holds one; with "
                            "--traffic tgen: all but the generator's)")
        g.add_argument("--traffic", choices=TRAFFIC, default="pcap",
                       help="traffic source: pcap = embedded capture replay from memory (net_pcap, inside R); "
                            "tgen = the traffic generator pp-tgen, a second DPDK process per assignment on "
                            "--tgen-contexts, sending the window's packets at --rate max with back-pressure over "
                            "net_memif, one queue per instance (needs --packets, not --duration) (default: pcap)")
        g.add_argument("--tgen-contexts", metavar="LIST",
                       help="with --traffic tgen: the contexts pp-tgen runs on, excluded from the sampling space "
                            "(default: the highest context, here "
                            f"{format_contexts(default_tgen_contexts())}); --contexts may not overlap them")


def _traffic_args(args: argparse.Namespace) -> tuple[str, list[int] | None]:
    from .dpdk_contexts import parse_contexts

    traffic = getattr(args, "traffic", None) or "pcap"
    tg = getattr(args, "tgen_contexts", None)
    return traffic, parse_contexts(tg, "--tgen-contexts") if tg else None


def _contexts_arg(args: argparse.Namespace, topo: Topology | None = None) -> list[int] | None:
    """--contexts; with --traffic tgen and no --contexts: every context but the generator's."""
    from .dpdk_contexts import parse_contexts

    ctx = getattr(args, "contexts", None)
    if ctx:
        return parse_contexts(ctx)
    traffic, tg = _traffic_args(args)
    if traffic != "tgen":
        return None
    tg = tg or default_tgen_contexts()
    have = sorted(int(o) for o in topo.os_index) if topo is not None else sorted(os.sched_getaffinity(0))
    rest = [c for c in have if c not in tg]
    if not rest:
        raise BackendError(f"--traffic tgen: the generator's context(s) {format_contexts(tg)} leave no context "
                           f"for the app's tasks (this machine has {format_contexts(have)})")
    return rest


def options_from_args(args: argparse.Namespace) -> DpdkOptions:
    traffic, tg = _traffic_args(args)
    return DpdkOptions(build_dir=Path(args.build) if getattr(args, "build", None) else None,
                       packets=args.packets, duration=args.duration, warmup=args.warmup, timeout=args.timeout,
                       runner=args.runner, contexts=_contexts_arg(args), traffic=traffic, tgen_contexts=tg)


def restrict(topo: Topology, args: argparse.Namespace) -> Topology:
    """The sampling space: `topo` limited to --contexts when given (with
    --traffic tgen: to the contexts the generator does not use)."""
    from .dpdk_contexts import restrict_topology

    ctx = _contexts_arg(args, topo)
    return restrict_topology(topo, ctx) if ctx else topo


def summarize(values: Sequence[float]) -> dict:
    import numpy as np

    v = np.asarray(values, dtype=float)
    mean = float(v.mean()) if v.size else float("nan")
    std = float(v.std(ddof=1)) if v.size > 1 else float("nan")
    return {"n": int(v.size), "mean": mean, "std": std, "cv": std / mean if v.size > 1 and mean else float("nan"),
            "median": float(np.median(v)) if v.size else float("nan"),
            "min": float(v.min()) if v.size else float("nan"), "max": float(v.max()) if v.size else float("nan")}


__all__ = ["DpdkBackend", "DpdkOptions", "PAPER_PACKETS", "add_dpdk_options", "options_from_args", "restrict",
           "contexts_of", "summarize"]
