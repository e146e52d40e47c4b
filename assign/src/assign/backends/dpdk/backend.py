"""The `dpdk` backend: run the real app with each sampled placement on this
machine and measure its packets per second (kind "measured").

Protocol per assignment (assign/DPDK_BACKEND.md):
  placement JSON (contract 1) from the draw -> the app binary of the Meson
  build, fed by the embedded default traffic (traffic.py, --traffic
  pcap) or by the traffic generator over net_memif (tgen.py, --traffic
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

import hashlib
import shutil
import sys
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path

from ..base import BackendError, MeasureRequest, RealRuns, Result
from ...topology import Topology
from ...workloads import Workload, known_workloads
from .client import ClientRunner, ClientTraffic
from .options import DpdkOptions, default_build_dir, default_cache_dir, tgen_duration_refusal
from .runners import Outcome, ProcessRunner, RunSpec, ServeRunner, serve_supported, workdir
from .tgen import TgenTraffic
from .traffic import TrafficError, build_traffic, expand, source_dir
from .veth import VethTraffic


class DpdkBackend(RealRuns):
    name = "dpdk"
    kind = "measured"
    batch_size = 1  # one real run at a time: two at once would measure each other

    def __new__(cls, topo=None, workload=None, *args, **kwargs):
        """A program we did not write (its workload file says `launch`) is measured by
        backends/program/ (ProgramBackend, the same entry points): every caller gets it from here."""
        if workload is not None and workload.spec.program is not None:
            from ..program.backend import ProgramBackend

            return ProgramBackend(topo, workload, *args, **kwargs)  # not a DpdkBackend: no __init__ here
        return super().__new__(cls)

    def __init__(self, topo: Topology, workload: Workload, options: DpdkOptions | None = None,
                 allow_colocate: bool | None = None, tier: str | None = None):
        """allow_colocate: the placement's flag; None sets it exactly when a
        draw puts two tasks on one context (the flag only permits sharing).
        tier: a client workload's input tier (None: the file's default_tier)."""
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
        wl_spec = workload.spec
        binary = self.opts.app_binary or (Path(expand((wl_spec.binary,), build=build, source="{source}")[0])
                                          if wl_spec.binary else build / "apps" / workload.app / workload.app)
        if "{source}" in str(binary):
            try:
                binary = Path(str(binary).replace("{source}", str(source_dir(build))))
            except TrafficError as e:
                raise BackendError(f"backend dpdk: {e}") from None
        if not Path(binary).is_file():
            raise BackendError(f"backend dpdk: app {workload.app} is not built: {binary} does not exist "
                               f"(ninja -C {build})")
        self.binary = Path(binary)
        rules = self.opts.rules_identity()
        if rules is not None and not wl_spec.reads_rules:
            readers = [n for n, s in known_workloads().items() if s.reads_rules]
            raise BackendError(f"--rules {rules['file']}: only the {', '.join(readers)} workload"
                               f"{'s' if len(readers) > 1 else ''} read{'' if len(readers) > 1 else 's'} a rule "
                               f"set, not {workload.name}")
        cache = self.opts.cache_dir or default_cache_dir()
        prefix = "asg" + uuid.uuid4().hex[:10]
        wdir = workdir(prefix)
        self.tgen: TgenTraffic | None = None
        self.client: ClientTraffic | None = None
        self.veth: VethTraffic | None = None
        rules_arg = (Path(rules["file"]), rules["sha256"]) if rules else None
        # {workdir}: a file the app writes that a client workload's check reads (assign/WORKLOADS.md)
        app_args = workload.app_args
        if any("{" in a for a in app_args):
            try:
                app_args = expand(tuple(app_args), build=build, source=source_dir(build), workdir=wdir)
            except TrafficError as e:
                shutil.rmtree(wdir, ignore_errors=True)
                raise BackendError(f"backend dpdk: {e}") from None
        app_args = app_args + (["--rules", rules["file"]] if rules else [])
        try:
            if wl_spec.client is not None:
                if self.opts.traffic != "pcap":
                    raise TrafficError(f"--traffic {self.opts.traffic}: workload {workload.name} makes its "
                                       f"traffic with a client in a network namespace (its file's traffic.client)")
                self.traffic = self.client = ClientTraffic(build, workload, Path(cache), tier, wdir)
            elif self.opts.traffic == "tgen":
                self.traffic = self.tgen = TgenTraffic(build, workload, list(self.opts.tgen_contexts), wdir,
                                                       cache_dir=Path(cache), rules=rules_arg,
                                                       wanted_packets=self.opts.capture_packets)
            elif self.opts.traffic == "veth":
                self.traffic = self.veth = VethTraffic(build, workload, list(self.opts.tgen_contexts), wdir)
                app_args = app_args + self.veth.app_args()
            else:
                self.traffic = build_traffic(build, workload, Path(cache), self.opts.capture_packets, rules_arg)
        except TrafficError as e:
            shutil.rmtree(wdir, ignore_errors=True)
            raise BackendError(f"backend dpdk: {e}") from None
        if self.client is not None:
            spec = RunSpec(self.binary, ["--no-pci", "--log-level", "lib.eal:warning"]
                           + [a for v in self.client.vdevs for a in ("--vdev", v)], [],
                           ["--mbufs", str(self.client.mbufs), "--mbuf-size", str(self.client.mbuf_size)]
                           + app_args, prefix, wdir)
            self.runner = ClientRunner(spec, self.client)
            try:
                self.client.up()
            except TrafficError as e:
                self.runner.close()
                raise BackendError(f"backend dpdk: {e}") from None
            self._finalizer = weakref.finalize(self, _close_client, self.runner, self.client)
            return
        spec = RunSpec(self.binary,
                       ["--no-pci", "--log-level", "lib.eal:warning"]
                       + [a for v in self.traffic.vdevs for a in ("--vdev", v)],
                       self.opts.window_args(),
                       ["--mbufs", str(self.traffic.mbufs), "--mbuf-size", str(self.traffic.mbuf_size)]
                       + app_args,
                       prefix, wdir)
        mode = self.opts.runner
        if mode == "auto":
            mode = "serve" if serve_supported(self.binary) else "process"
        if mode == "serve" and self.opts.runner == "serve" and not serve_supported(self.binary):
            raise BackendError(f"--runner serve: {self.binary} --help does not list --serve "
                               f"(use --runner process)")
        if self.tgen is not None and mode == "process" and self.opts.duration is not None:
            shutil.rmtree(wdir, ignore_errors=True)
            raise BackendError(f"backend dpdk: {self.binary} --help does not list --serve; "
                               + tgen_duration_refusal(self.opts.duration))
        self.runner: ProcessRunner | ServeRunner = ServeRunner(spec) if mode == "serve" else ProcessRunner(spec)
        # the serve process, the generator and the work directory go with the backend, or at the
        # latest at exit; the app first: the generator must not be the side that leaves a live link
        self._finalizer = weakref.finalize(self, _close, self.runner, self.tgen, self.veth)

    # Backend protocol ------------------------------------------------------
    def describe(self) -> dict:
        spec = self.workload.spec
        d = {"app": self.workload.app, "variant": self.workload.variant, "kind": "measured",
             "value": spec.value_label, "traffic": self.traffic.describe()}
        d.update(self.opts.identity())
        if self.client is not None:  # the window is the client's run: no packet count, no warm-up
            d["window"] = {"until": "the client command ends"}
            d.pop("warmup_s", None)
        if not spec.builtin:  # a user's workload file: what it says is part of the run (assign/WORKLOADS.md)
            d["workload"] = spec.identity()
        return d

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        return [self.measure_one(r.contexts) for r in requests]

    # ------------------------------------------------------------------------
    def measure_one(self, contexts: Sequence[int]) -> Result:
        """Measure one assignment (task t on PU os_index contexts[t]); one retry."""
        return self.measure_placement(self.placement(contexts))

    def measure_placement(self, doc: dict) -> Result:
        reasons: list[str] = []
        for attempt in (1, 2):
            serve = isinstance(self.runner, ServeRunner)
            if self.veth is not None:
                gone = self.veth.ensure()
                if gone is not None:
                    reasons.append(f"attempt {attempt}: {gone}")
                    continue
            if self.tgen is not None and (not serve or not self.tgen.alive()):
                # serve: one generator per sample (tgen.py): the first assignment starts it, a failed
                # attempt killed it; the app connects to a fresh generator with a fresh process.
                # process: one generator per assignment, sending exactly the window's packets
                if serve:
                    self.runner.restart()
                gone = self.tgen.start(None if serve else self.opts.packets)
                if gone is None and serve:
                    gone = self._prime(doc)
                if gone is not None:
                    reasons.append(f"attempt {attempt}: {gone}")
                    continue
            out = self.runner.run(doc, self.opts.timeout_s())
            if self.tgen is not None and out.stats is not None:
                # what the app took from the link, for the link's accounting
                self.tgen.fed(int(out.stats.get("total", {}).get("rx_packets", 0)))
            why = out.error or self._check(out.stats, doc, out.client)
            if why is None and self.tgen is not None and serve and not self.tgen.alive():
                why = f"the generator ended during the window: {self.tgen.abort()}"
            if why is None and self.tgen is not None and not serve:
                # the app process has left (its link is down): the generator, idle since its last packet, too
                sess = self.tgen.finish(0)
                if not sess["closed"]:
                    why = f"generator: {sess.get('why_not_closed') or sess}"
                gen_tx = sess.get("generator_tx")
            if why is None:
                extra = self._extra(out)
                extra["attempts"] = attempt
                if reasons:
                    extra["retried_after"] = reasons[0]
                if self.tgen is not None:
                    # measured, outside the app's wall_s: the start of the generator that fed this assignment
                    extra["traffic"]["generator_start_s"] = round(self.tgen.start_s, 6)
                    extra["traffic"]["generator_placements"] = self.tgen.placements
                    if not serve:  # this assignment's own generator: its figures (measured)
                        extra["traffic"]["generator_tx"] = dict(gen_tx or {}, kind="measured")
                return Result(value_of(self.workload.spec, out), extra=extra)
            if isinstance(self.runner, ServeRunner):
                self.runner.restart()
            gen = self.tgen.abort() if self.tgen is not None else None
            reasons.append(f"attempt {attempt}: {why}" + (f"; {gen}" if gen else ""))
        return Result.failed("; ".join(reasons), {"kind": "measured", "attempts": 2, "runner": self.runner.mode,
                                                  "traffic": self._traffic_extra()})

    def _prime(self, doc: dict) -> str | None:
        """A fresh serve process and generator: one placement run and thrown
        away, so that the link comes up (the app's ports start with its first
        placement, the generator starts sending when it sees the link) before
        any window that counts.  None, or why it failed (both killed)."""
        out = self.runner.run(doc, self.opts.timeout_s())
        if out.stats is not None:
            self.tgen.fed(int(out.stats.get("total", {}).get("rx_packets", 0)))
            self.tgen.placements -= 1  # not a measurement: fed() counts the packets, not the placement
            return None
        self.runner.restart()
        gen = self.tgen.abort()
        return f"priming the link: {out.error}" + (f"; {gen}" if gen else "")

    def _traffic_extra(self) -> dict:
        """Which traffic source fed the app, labelled."""
        if self.client is not None:
            return {"source": "client", "label": f"client: {' '.join(self.client.client.command)} in network "
                                                 f"namespace {self.client.name}, into {self.client.vdevs[0]}"}
        if self.tgen is not None:
            return {"source": "tgen", "label": self.tgen.label(), "generator_starts": self.tgen.starts,
                    "generator_contexts": list(self.tgen.contexts), "link_kept_up": True}
        if self.veth is not None:
            return {"source": "veth", "label": self.veth.label(), "generator_contexts": list(self.veth.contexts)}
        return {"source": "pcap", "label": "pcap: net_pcap infinite_rx replay from memory inside R, "
                                           "app tx into net_null"}

    def _check(self, stats: dict | None, doc: dict, out_client: dict | None = None) -> str | None:
        """Why these statistics are not a measurement of `doc`, or None."""
        try:
            if stats.get("kind") != "measured":
                return f"statistics kind is {stats.get('kind')!r}, not 'measured'"
            if stats.get("accounting_ok") is not True:
                return "accounting check failed (rx != tx + dropped + queued)"
            total = stats["total"]
            spec = self.workload.spec
            if (spec.value_from, spec.value_path) != ("stats", "total.pps"):
                v = lookup(stats, spec.value_path) if spec.value_from == "stats" else \
                    lookup(out_client, f"{spec.value_from}.{spec.value_path}")
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                    return (f"value {spec.value_label.split(':')[0]} is {v!r}, not a positive number "
                            f"(workload {spec.name}'s value.path)")
            elif not total.get("pps", 0) > 0:
                before = total.get("tx_packets", 0)
                return (f"no packets forwarded in the window (pps {total.get('pps')})"
                        + (f"; {before} forwarded before it: the pipeline stalled (a task's context starved "
                           f"by other load?)" if before else ""))
            insts = stats["instances"]
            if len(insts) != len(doc["instances"]):
                return f"statistics list {len(insts)} instances, the placement {len(doc['instances'])}"
            idle = [i["index"] for i in insts if not i.get("tx_packets", 0) > 0]
            if idle and self.client is None:  # a client may reach fewer queues than there are instances
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
        warm = 0.0 if self.client is not None else self.opts.warmup
        return {
            "kind": "measured",
            "runner": self.runner.mode,
            "wall_s": round(out.wall_s, 6),
            "window_s": round(window, 6),
            "warmup_s": warm,
            "window_packets": s["total"].get("window_tx_packets"),
            # false: the app ran on 4 KiB pages (too few hugepages free), slower for a memory-bound one
            "hugepages": s.get("hugepages"),
            # the mbuf pool's driver: a LIFO hands back buffers freed on another context warmer
            "pool_ops": s.get("pool_ops"),
            # start-up, port set-up, drain, tear-down: everything that is not warm-up or window
            "overhead_s": round(max(0.0, out.wall_s - window - warm), 6),
            "notes": out.notes,
            "traffic": self._traffic_extra(),
            "instances": [{k: i.get(k) for k in ("index", "pps", "tx_packets", "dropped_packets",
                                                  "queued_packets")} for i in s["instances"]],
            "tasks": [{k: t.get(k) for k in ("instance", "role", "context", "packets", "bursts",
                                              "empty_polls", "cycles")} for t in s["tasks"]],
        } | ({"client": out.client} if out.client is not None else {}) | self._result_fields(out)

    def _result_fields(self, out: Outcome) -> dict:
        """The workload file's [result] fields (pipeplace run's result), read from this run."""
        fields = self.workload.spec.result
        if not fields:
            return {}
        return {"result": {k: lookup(out.stats, v.split(".", 1)[1]) if v.startswith("stats.") else
                           lookup(out.client, v) for k, v in fields.items()}}

    def provenance(self) -> dict:
        """The app this backend measures, by content: a rebuilt app is another measurement."""
        return {"app": str(self.binary), "app_sha256": hashlib.sha256(self.binary.read_bytes()).hexdigest()}

    def restart(self) -> None:
        """The next placement gets a fresh app process (and, with tgen, a fresh generator), as
        after a failed attempt: one whose EAL start fell back to 4 KiB pages, say."""
        if isinstance(self.runner, ServeRunner):
            self.runner.restart()
        if self.tgen is not None:
            self.tgen.abort()

    def close(self) -> None:
        """Stop the serve process (end of input: it finishes and exits), then the traffic generator,
        and remove temporary files."""
        self._finalizer()

    def __enter__(self) -> "DpdkBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def lookup(doc: dict | None, path: str):
    """The value at a dotted path of a JSON object (None where there is none)."""
    for k in path.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def value_of(spec, out: Outcome) -> float:
    """A checked outcome's value, where the workload file's [value] says."""
    if spec.value_from == "stats":
        return float(lookup(out.stats, spec.value_path))
    return float(lookup(out.client, f"{spec.value_from}.{spec.value_path}"))


def _close_client(runner: ClientRunner, client: ClientTraffic) -> None:
    """The app's work directory, then the client's tear-down, namespace and veth."""
    runner.close()
    client.down()


def _close(runner: ProcessRunner | ServeRunner, tgen: TgenTraffic | None, veth: VethTraffic | None = None) -> None:
    """With the generator: it stops sending first (and keeps its port open),
    then the app leaves (end of input: it drains what the link still holds,
    counts it, stops its ports), then the generator leaves by itself; the
    link's accounting is recorded in tgen.sessions.  Then the work directory.
    veth: the generator stops, then the app leaves, then the bed goes."""
    if veth is not None:
        veth.stop()
        runner.close()
        veth.remove()
        return
    if tgen is None:
        runner.close()
        return
    if tgen.proc is None:
        runner.close()
        tgen.stop()
        return
    why = tgen.stop_sending()
    drained = None
    if isinstance(runner, ServeRunner):
        before = len(runner.end_reports)
        runner.stop()
        # only a report of the process that ends now (none when no process was running)
        end = runner.end_reports[-1] if len(runner.end_reports) > before else None
        if end is not None and runner.exits and runner.exits[-1] == 0:
            drained = int(end.get("drained_packets", 0))
        elif why is None:
            why = "the app did not end cleanly (no serve-end report or a non-zero exit)"
    else:
        why = why or "process runner: one app process per placement, no link accounting"
    s = tgen.finish(drained, why)
    if s.get("closed"):
        print(f"assign: generator link (measured): {s['generator_tx']['packets']} packets sent = "
              f"{s['app_rx']} received by {s['placements']} placement(s) + {s['app_drained_at_end']} drained at "
              f"the end; link closed exactly", file=sys.stderr)
    elif "why_not_closed" not in s:
        print(f"assign: warning: the generator's link does not account for every packet: {s}", file=sys.stderr)
    else:
        print(f"assign: generator link not accounted: {s['why_not_closed']}", file=sys.stderr)
    runner.close()


__all__ = ["DpdkBackend", "DpdkOptions"]
