"""How the dpdk backend measures each assignment: the window (a packet
count per instance, the paper's 3 million by default, or a duration), the
warm-up, the timeout, the runner, the traffic source and the contexts tasks
may use.  Everything but `runner`, `timeout`, `cache_dir` and `app_binary`
identifies a run (stored as its params)."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..base import BackendError
from ...topology import format_contexts, parse_contexts
from .tgen import default_tgen_contexts

PAPER_PACKETS = 3_000_000     # per instance, the paper's window (sec. 4.4)
DEFAULT_WARMUP_S = 0.2
SLOWEST_PPS = 25_000          # per instance: a --packets window slower than this counts as hung
TIMEOUT_MARGIN_S = 15.0       # start-up and tear-down allowance of the default timeout
RUNNERS = ("auto", "serve", "process")
TRAFFIC = ("pcap", "tgen", "veth")  # embedded pcap replay (default) | pp-tgen over net_memif | over veths
REPO = Path(__file__).resolve().parents[5]


def default_cache_dir() -> Path:
    """Where generated captures are kept (--cache-dir's default): $XDG_CACHE_HOME/pipeplace/assign-dpdk."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pipeplace" / "assign-dpdk"


def default_build_dir() -> Path:
    return Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")).resolve()


def tgen_duration_refusal(duration: float) -> str:
    """Why --traffic tgen cannot have a timed window with one app process per
    placement (the serve runner can: its link stays up)."""
    return (f"--traffic tgen with --duration {duration:g} and the process runner: give --packets N instead. "
            f"With one app process per placement the generator sends exactly the window's packets and is idle "
            f"before the app disconnects; with a timed window the app would leave while the generator still "
            f"sends, which crashes DPDK 22.11's memif PMD (see assign/DPDK_BACKEND.md)")


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
    rules: Path | None = None            # ahocorasick: the Snort rule set (app and traffic); None: the app's default
    _rules_digest: str = field(default="", init=False, repr=False)
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
        if self.capture_packets is not None and not (isinstance(self.capture_packets, int)
                                                     and not isinstance(self.capture_packets, bool)
                                                     and self.capture_packets >= 1):
            raise BackendError(f"--capture-packets {self.capture_packets!r}: expected at least 1 packet per capture")
        if self.runner not in RUNNERS:
            raise BackendError(f"--runner {self.runner!r}: expected one of {', '.join(RUNNERS)}")
        if self.packets is None and self.duration is None:
            self.packets = PAPER_PACKETS
        if self.traffic not in TRAFFIC:
            raise BackendError(f"--traffic {self.traffic!r}: expected one of {', '.join(TRAFFIC)}")
        if self.traffic in ("tgen", "veth"):
            if self.traffic == "tgen" and self.duration is not None and self.runner == "process":
                raise BackendError(tgen_duration_refusal(self.duration))
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
            raise BackendError(f"--tgen-contexts {format_contexts(self.tgen_contexts)}: only with --traffic tgen "
                               f"or veth")
        if self.rules is not None:
            self.rules = Path(self.rules).resolve()
            self._rules_digest = rules_digest(self.rules)

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
        if self.rules is not None:  # absent = the app's default rule set, as before --rules
            d["rules"] = self.rules_identity()
        return d

    def rules_identity(self) -> dict | None:
        """The rule set's file and content digest (None: the app's default)."""
        if self.rules is None:
            return None
        return {"file": str(self.rules), "sha256": self._rules_digest}

    @staticmethod
    def from_params(params: dict, **overrides) -> "DpdkOptions":
        """Options of a stored run (its params), to measure more with the same protocol."""
        win = params.get("window", {})
        opts = dict(packets=win.get("packets_per_instance"), duration=win.get("duration_s"),
                    warmup=params.get("warmup_s"),
                    capture_packets=params.get("capture_packets"))
        if "contexts" in params:
            opts["contexts"] = parse_contexts(params["contexts"], "the run's stored contexts")
        opts["traffic"] = params.get("traffic_source", "pcap")  # runs from before --traffic: pcap
        if "tgen_contexts" in params:
            opts["tgen_contexts"] = parse_contexts(params["tgen_contexts"], "the run's stored tgen_contexts")
        stored_rules = params.get("rules")
        if stored_rules is not None:
            opts["rules"] = Path(stored_rules["file"])
        opts.update(overrides)
        o = DpdkOptions(**opts)
        if stored_rules is not None and o.rules_identity() != stored_rules:
            raise BackendError(f"the run's rule set {stored_rules['file']} (sha256 {stored_rules['sha256']}) has "
                               f"changed since it was measured (now {o.rules_identity()['sha256']} at "
                               f"{o.rules}): its values and new ones would not be the same workload; put the "
                               f"old file back, or start a new run")
        return o


def rules_mismatch(recorded: dict | None, given: dict | None) -> str | None:
    """Why a file measured with the rule set `recorded` does not go with `given` (None: they match).
    The content decides (the digest), not where the file lies."""
    def name(r: dict | None) -> str:
        return f"{r['file']} (sha256 {r['sha256']})" if r else "the app's default rule set"

    if (recorded or {}).get("sha256") == (given or {}).get("sha256"):
        return None
    return f"it was measured with {name(recorded)}, this run uses {name(given)} (--rules)"


def capture_mismatch(recorded: int | None, given: int | None) -> str | None:
    """Why a file measured with captures of `recorded` packets does not go with `given` (None: they
    match; None on a side: the generator's default)."""
    if recorded == given:
        return None

    def name(n: int | None) -> str:
        return f"captures of {n:,} packets" if isinstance(n, int) else (
            "the generator's default captures" if n is None else f"captures of {n!r} packets")

    return f"it was measured with {name(recorded)}, this run uses {name(given)} (--capture-packets)"


def rules_digest(path: Path) -> str:
    """The first 16 hex digits of a rule file's SHA-256: a changed rule set is another workload."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BackendError(f"--rules {path}: cannot read the rule file: {e.strerror}") from None
    return hashlib.sha256(data).hexdigest()[:16]
