"""`assign calibrate`: the model backend's parameters fitted for this machine
(characterize, then a few measured placements; see characterize/fit.py)."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from ..characterize.fit import CAL_PLACEMENTS, CONTEXT_SHARES, MAX_INSTANCES, MIN_WINDOW_PACKETS, WINDOW_S
from ._args import at_least, output_file
from ._options import add_workload_choice, rules_arg
from ._save import save
from .characterize import add_characterize_options

at_least_three = at_least(3, "{text!r}: the fit needs at least 3 measured placements")


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("calibrate", help="fit the model's parameters for this machine (characterize + placements)",
                       description="Fit the model backend's parameters for one workload on this machine: base costs "
                                   "and sharing from a characterization (--characterization FILE from assign "
                                   "characterize --json, or one run now), the rest (a scale on the base costs, "
                                   "the communication cost between contexts, what R pays for a buffer that comes back "
                                   "from another context) from --placements measured random "
                                   "placements of 1 to --max-instances co-located instances. Parameters of levels "
                                   "this machine "
                                   "lacks keep their packaged defaults and are marked 'not calibrated' in the file "
                                   "and the output. Use the file with --backend model --model-params FILE.")
    add_workload_choice(p)
    p.add_argument("--out", required=True, type=output_file, metavar="FILE", help="the calibrated parameter file to write")
    p.add_argument("--characterization", metavar="FILE",
                   help="assign characterize --json output for this workload and machine (default: characterize now)")
    p.add_argument("--placements", type=at_least_three, default=CAL_PLACEMENTS, metavar="N",
                   help="measured random placements for the parameters characterize leaves unidentified, "
                        f"beside the contrast placements (default: {CAL_PLACEMENTS}; fitted on 8, the "
                        "held-out p90 error was about half again as large: assign/notes/2026-11-25-transit-ns.md)")
    add_characterize_options(p)
    g = p.add_argument_group("placements (dpdk backend, default build, measured)")
    g.add_argument("--max-instances", type=at_least(1), default=MAX_INSTANCES, metavar="K",
                   help="the placements run 1 to K instances, each task on a random context; the drift "
                        "reference and the contrast placements use min(K, contexts) instances; validate "
                        f"reads K from the file (default: {MAX_INSTANCES}; on a larger machine, 8)")
    g.add_argument("--placement-packets", type=at_least(1), metavar="N",
                   help="window of each calibration placement: N packets per instance; validate measures "
                        f"the same by default (default: what one instance fused alone forwards in {WINDOW_S:g} s "
                        f"at the characterized cycles per packet, at least {MIN_WINDOW_PACKETS:,}: the window "
                        "is timed from the workers' launch, and a shorter one measures their start)")
    g.add_argument("--placement-reps", type=at_least(1), default=3, metavar="K",
                   help="measure every calibration placement once per round, K rounds, and fit each "
                        "one's median (default: 3)")
    g.add_argument("--drift-reference", nargs="?", const="fused", choices=("none", "fused", "both"), default="both",
                   metavar="both|fused|none",
                   help="measure a reference placement (one instance fused on each of up to --max-instances contexts) "
                        "before the first calibration placement and after every one, and fit each placement "
                        "scaled by the run's median reference over the references around it (doubles the "
                        "measurements); --drift-reference both: also a crossing one (the same instances, each "
                        "split over two contexts), which corrects the placements with a split instance "
                        "(triples them; rounds.py says why). Default: both, the protocol that validated best "
                        "(assign/CALIBRATE.md); none: no reference")
    g.add_argument("--context-shares", choices=CONTEXT_SHARES, default="one",
                   help="the model's share of each context's time the workload gets: one for every context "
                        "(default), one per context, or whichever Akaike's criterion prefers on the calibration "
                        "placements (choose); shares per context fit the other load of the calibration's "
                        "minutes and missed more on new placements (assign/notes/2026-11-25-context-shares.md)")
    g.add_argument("--app-build", metavar="DIR", help="Meson build of the measured placements "
                                                      "(default: $PIPEPLACE_BUILD or build/)")
    return p


def placement_window(given: int | None, char: dict) -> tuple[int, str]:
    """The calibration placements' window (packets per instance) and where it comes from:
    --placement-packets where given, else the characterization's default (fit.window_packets)."""
    from ..characterize.fit import window_packets

    if given is not None:
        return given, "--placement-packets"
    return window_packets(char), (f"about {WINDOW_S:g} s of one instance fused alone at the characterized "
                                  "cycles per packet, estimated; --placement-packets sets it")


def load_characterization(path: str, workload: str, topo, rules: dict | None = None,
                          capture_packets: int | None = None) -> dict:
    """A characterize --json file, refused for another workload, machine, rule set (rules: the
    rule set's identity, DpdkOptions.rules_identity) or capture size (--capture-packets; None: the
    generator's default)."""
    from ..backends.dpdk.options import capture_mismatch, rules_mismatch

    try:
        with open(path) as f:
            char = json.load(f)
    except OSError as e:
        raise ValueError(f"--characterization {path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"--characterization {path}: invalid JSON at line {e.lineno}: {e.msg}") from None
    if not isinstance(char, dict) or "roles" not in char or "sharing" not in char or "timer" not in char:
        raise ValueError(f"--characterization {path}: not an assign characterize --json file")
    if char.get("workload") != workload:
        raise ValueError(f"--characterization {path} is for workload {char.get('workload')!r}, not {workload!r}")
    if char.get("machine") != topo.to_json()["tree"]:
        raise ValueError(f"--characterization {path} was measured on another machine (its hwloc topology "
                         f"differs from this one's: {topo.summary()})")
    why = rules_mismatch(char.get("rules"), rules)
    if why:
        raise ValueError(f"--characterization {path} is for another rule set: {why}")
    why = capture_mismatch(char.get("capture_packets"), capture_packets)
    if why:
        raise ValueError(f"--characterization {path} is for another capture size: {why}")
    return char


def run(args: argparse.Namespace) -> int:
    if args.drift_reference == "none":
        args.drift_reference = None
    from importlib import resources
    from pathlib import Path

    from ..backends.dpdk.options import DpdkOptions
    from ..characterize.fit import fit
    from ..characterize.meter import PlacementMeter
    from ..topology import get_machine
    from ..workloads import Workload
    from .characterize import characterize

    Workload(args.workload, 1)
    topo = get_machine("local")
    opts = DpdkOptions(build_dir=Path(args.app_build) if args.app_build else None,
                       packets=args.placement_packets, warmup=0.0, rules=rules_arg(args),
                       capture_packets=args.capture_packets)
    if args.characterization:
        char = load_characterization(args.characterization, args.workload, topo, opts.rules_identity(),
                                     opts.capture_packets)
        print(f"characterization from {args.characterization}")
    else:
        char = characterize(args)
    packets, why = placement_window(args.placement_packets, char)
    opts = dataclasses.replace(opts, packets=packets)
    print(f"window: {packets:,} packets per instance ({why})")
    defaults = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    base = defaults["workloads"].get(args.workload)
    if base is None:  # a workload file's: start from the packaged parameters of its app (else ipfwd-l1's)
        from ..workloads import BUILTIN, spec_of

        twin = next((n for n, s in BUILTIN.items() if s.app == spec_of(args.workload).app), "ipfwd-l1")
        print(f"{args.workload} has no packaged model parameters: what this machine does not identify keeps "
              f"{twin}'s packaged defaults (marked 'not calibrated')")
        base = defaults["workloads"][twin]
    meter = PlacementMeter(topo, args.workload, opts)
    try:
        doc = fit(topo, args.workload, char, base,
                  meter, args.placements, reps=args.placement_reps,
                  drift_reference=args.drift_reference, max_instances=args.max_instances,
                  context_shares=args.context_shares)
    finally:
        meter.close()
    if opts.rules is not None:
        doc["calibrated_for"]["rules"] = opts.rules_identity()
    if opts.capture_packets is not None:  # absent: the generator's default captures
        doc["calibrated_for"]["capture_packets"] = opts.capture_packets
    if meter.no_hugepages:
        doc["calibration"]["status"]["hugepages"] = meter.hugepage_warning()
        doc["calibration"]["no_hugepages_instances"] = sorted(meter.no_hugepages)
    if meter.hugepage_retries:
        # one line in the file's status; the figures themselves are in discarded_measurements
        doc["calibration"]["status"]["hugepage_retries"] = meter.retry_note(figures=False)
    for q in doc["calibration"]["placements"]:
        # each task's cycles per packet (the median over the rounds, measured)
        q["task_cycles_per_packet"] = meter.task_cycles(q["instances"], tuple(q["contexts"]))
    # validate measures windows of the same length by default: the drift reference's level and the
    # start's share of each window are the calibration's then
    doc["calibration"]["placement_packets"] = opts.packets
    # the figures measured on 4 KiB pages and measured again (not fitted): kept, never dropped
    doc["calibration"]["discarded_measurements"] = meter.discarded
    saved = save(args.out, lambda f: json.dump(doc, f, indent=2), "calibrated parameters")
    status = doc["calibration"]["status"]
    for key, why in status.items():
        print(f"  {key}: {why}")
    print(f"not calibrated ({len(doc['calibration']['not_calibrated'])}): "
          + (", ".join(doc["calibration"]["not_calibrated"]) or "none"))
    if not saved:
        return 1
    print(f"calibrated parameters for {args.workload} on this machine written to {args.out}")
    for w in doc["calibration"]["warnings"]:
        print(f"assign calibrate: warning: {w}", file=sys.stderr)
    return 0
