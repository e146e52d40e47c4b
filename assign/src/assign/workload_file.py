"""Reading a workload file (TOML, assign/WORKLOADS.md) into a WorkloadSpec.

TOML, read with the standard library's tomllib: people write these files
by hand, and TOML has comments (why an option is there) and tables without
JSON's quoting and trailing-comma traps; nothing writes them, so a
read-only parser is all that is needed.

Every error names the file, the dotted key and the value found.  Paths in
the file are relative to the file's own directory ({here}); {source} and
{build} are the Meson build's source tree and build directory, resolved
when the workload runs.
"""
from __future__ import annotations

import hashlib
import json
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIERS = ("test", "simsmall", "simmedium", "simlarge", "native")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
DEFAULT_VALUE = ("stats", "total.pps", "packets/s", "transmitted packets per second of the window")

# placeholders each template may use (besides tier parameters, in the client's commands)
BUILD_VARS = {"source", "build"}
GEN_VARS = {"python", "source", "build", "output"}
OPTION_VARS = BUILD_VARS | {"workdir"}
CLIENT_VARS = {"python", "source", "build", "netns", "veth_host", "veth_ns", "address", "input", "instances",
               "workdir"}
VDEV_VARS = {"veth_host", "instances"}
INPUT_VARS = {"python", "source", "build", "output"}


class WorkloadError(ValueError):
    """Unknown workload, or one that does not fit the machine."""


class WorkloadFileError(WorkloadError):
    """A workload file that cannot be used: names the file, the key and the value."""


@dataclass(frozen=True)
class Capture:
    """Traffic replayed from captures (net_pcap with --traffic pcap; pp-tgen's --pcap with --traffic tgen)."""

    generator: tuple[str, ...] | None = None  # writes {output}; the backend adds --seed I and --packets N
    file: str | None = None                   # or one fixed capture, replayed on every instance's queue
    file_sha256: str | None = None
    sizes: str = "the generator's size mix"
    default_packets: int | None = None        # what the generator writes without --packets


@dataclass(frozen=True)
class Client:
    """Traffic from a client command in a network namespace, through a veth pair into the app's port."""

    vdevs: tuple[str, ...]
    address: str                               # the namespace end of the veth (CIDR)
    command: tuple[str, ...]                   # runs in the namespace once the app's port 0 is up
    setup: tuple[tuple[str, ...], ...] = ()    # on the host, after the namespace and veth exist
    teardown: tuple[tuple[str, ...], ...] = ()  # on the host, always (also after a failure)
    input: tuple[str, ...] | None = None       # writes {output}: the tier's input, {input} in the commands
    check: tuple[str, ...] | None = None       # after the app ended: its JSON line is "check" (e.g. a decoder)
    timeout_s: float = 120.0
    mbufs: int = 8191
    mbuf_size: int = 2048
    stop: str = "sigint"                       # "exit": the app ends by itself once the client is done


@dataclass(frozen=True)
class Tier:
    name: str
    capture_packets: int | None = None
    packets: int | None = None       # window: packets per instance
    duration: float | None = None    # or seconds
    params: dict[str, Any] = field(default_factory=dict)  # the client's {placeholders}


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    app: str
    source: str                                   # "capture" or "client"
    description: str = ""
    binary: str | None = None                     # None: {build}/apps/<app>/<app>
    variant: str | None = None
    options: tuple[str, ...] = ()
    roles: tuple[str, ...] = ("R", "P", "T")
    reads_rules: bool = False
    tx_port: int = 1                              # the placement's tx port (rx is port 0)
    value_from: str = DEFAULT_VALUE[0]
    value_path: str = DEFAULT_VALUE[1]
    unit: str = DEFAULT_VALUE[2]
    value_about: str = DEFAULT_VALUE[3]
    capture: Capture | None = None
    tgen: tuple[str, ...] | None = None           # pp-tgen's templates; None: it replays the capture
    tgen_frame_bytes: int | None = None
    client: Client | None = None
    default_tier: str | None = None               # client: the tier whose input assign measures with
    tiers: dict[str, Tier] = field(default_factory=dict)
    result: dict[str, str] = field(default_factory=dict)  # pipeplace run's result fields: name -> from.path
    file: Path | None = None
    builtin: bool = False
    program: Any = None                           # a program we did not write (program_file.Program)

    @property
    def launch(self) -> str:
        """runtime (an app on runtime/pp_app.h), eal or threads (program_file.py)."""
        return "runtime" if self.program is None else self.program.launch

    @property
    def value_label(self) -> str:
        """What a stored value is (the run's params "value")."""
        path = self.value_path if self.value_from == "stats" else f"{self.value_from}.{self.value_path}"
        if self.program is not None:
            path = f"{self.value_from}: {self.value_path}"
        return f"{path}: {self.value_about}"

    def tier(self, name: str) -> Tier:
        if name not in self.tiers:
            have = ", ".join(self.tiers) or "none"
            raise WorkloadFileError(f"workload {self.name}: no tier {name!r} (it has: {have})")
        return self.tiers[name]

    def identity(self) -> dict:
        """Everything a measurement of this workload depends on, as JSON: a
        user's workload stores it with its runs (backend params "workload"),
        so a changed file starts a new run and a stored run is read back
        without the file.  Description, tiers other than the client's and
        pipeplace's result fields do not change a measurement."""
        if self.program is not None:
            return json.loads(json.dumps({"name": self.name, "launch": self.program.launch,
                                          "value": {"from": self.value_from, "path": self.value_path,
                                                    "unit": self.unit, "about": self.value_about},
                                          "program": self.program.identity()}))
        d: dict[str, Any] = {"name": self.name, "app": self.app, "binary": self.binary, "variant": self.variant,
                             "options": list(self.options), "roles": list(self.roles),
                             "reads_rules": self.reads_rules, "tx_port": self.tx_port,
                             "value": {"from": self.value_from, "path": self.value_path, "unit": self.unit,
                                       "about": self.value_about},
                             "source": self.source}
        if self.capture is not None:
            c = self.capture
            d["capture"] = {"generator": list(c.generator) if c.generator else None, "file": c.file,
                            "file_sha256": c.file_sha256, "sizes": c.sizes, "default_packets": c.default_packets}
        if self.tgen is not None:
            d["tgen"] = {"args": list(self.tgen), "frame_bytes": self.tgen_frame_bytes}
        if self.client is not None:
            c = self.client
            d["client"] = {"vdevs": list(c.vdevs), "address": c.address, "command": list(c.command),
                           "setup": [list(x) for x in c.setup], "teardown": [list(x) for x in c.teardown],
                           "input": list(c.input) if c.input else None, "timeout_s": c.timeout_s,
                           "check": list(c.check) if c.check else None, "stop": c.stop,
                           "mbufs": c.mbufs, "mbuf_size": c.mbuf_size}
            if self.default_tier is not None:
                t = self.tiers[self.default_tier]
                d["tier"] = {"name": t.name, "params": t.params}
        return json.loads(json.dumps(d))


def spec_from_identity(d: dict) -> WorkloadSpec:
    """The spec a stored run describes (WorkloadSpec.identity)."""
    try:
        v = d["value"]
        if "program" in d:
            from .program_file import program_from_identity

            return WorkloadSpec(name=d["name"], app=d["name"], source="program", roles=(), value_from=v["from"],
                                value_path=v["path"], unit=v["unit"], value_about=v["about"],
                                program=program_from_identity(d["program"]))
        cap = d.get("capture")
        cli = d.get("client")
        tier = d.get("tier")
        return WorkloadSpec(
            name=d["name"], app=d["app"], source=d["source"], binary=d.get("binary"), variant=d.get("variant"),
            options=tuple(d["options"]), roles=tuple(d["roles"]), reads_rules=bool(d["reads_rules"]),
            tx_port=int(d.get("tx_port", 1)),
            value_from=v["from"], value_path=v["path"], unit=v["unit"], value_about=v["about"],
            capture=None if cap is None else Capture(
                tuple(cap["generator"]) if cap["generator"] else None, cap["file"], cap["file_sha256"], cap["sizes"],
                cap["default_packets"]),
            tgen=tuple(d["tgen"]["args"]) if d.get("tgen") else None,
            tgen_frame_bytes=d["tgen"]["frame_bytes"] if d.get("tgen") else None,
            client=None if cli is None else Client(
                tuple(cli["vdevs"]), cli["address"], tuple(cli["command"]), tuple(map(tuple, cli["setup"])),
                tuple(map(tuple, cli["teardown"])), tuple(cli["input"]) if cli["input"] else None,
                tuple(cli["check"]) if cli.get("check") else None,
                float(cli["timeout_s"]), int(cli["mbufs"]), int(cli["mbuf_size"]), cli.get("stop", "sigint")),
            default_tier=tier["name"] if tier else None,
            tiers={tier["name"]: Tier(tier["name"], params=dict(tier["params"]))} if tier else {})
    except (KeyError, TypeError, ValueError) as e:
        raise WorkloadFileError(f"stored workload description {str(d)[:200]}: not one assign wrote ({e!r})") from None


# --- reading --------------------------------------------------------------------------


class _Reader:
    """Typed access to a parsed TOML document; every error names file, key, value."""

    def __init__(self, file: Path):
        self.file = file

    def fail(self, key: str, why: str, value: Any = None, show: bool = True) -> WorkloadFileError:
        got = f" (got {value!r})" if show else ""
        return WorkloadFileError(f"workload file {self.file}: key {key!r}: {why}{got}")

    def table(self, d: dict, key: str, prefix: str, allowed: set[str], required: bool = False) -> dict | None:
        full = f"{prefix}{key}"
        if key not in d:
            if required:
                raise self.fail(full, "missing (a table is required here)", show=False)
            return None
        t = d[key]
        if not isinstance(t, dict):
            raise self.fail(full, "expected a table", t)
        self.known(t, full + ".", allowed)
        return t

    def known(self, t: dict, prefix: str, allowed: set[str]) -> None:
        for k in t:
            if k not in allowed:
                raise self.fail(f"{prefix}{k}", f"unknown key (known here: {', '.join(sorted(allowed))})", t[k])

    def str(self, d: dict, key: str, prefix: str, required: bool = False, default: str | None = None,
            choices: tuple[str, ...] | None = None) -> str | None:
        full = f"{prefix}{key}"
        if key not in d:
            if required:
                raise self.fail(full, "missing", show=False)
            return default
        v = d[key]
        if not isinstance(v, str) or not v:
            raise self.fail(full, "expected a non-empty string", v)
        if choices is not None and v not in choices:
            raise self.fail(full, f"expected one of {', '.join(choices)}", v)
        return v

    def strings(self, d: dict, key: str, prefix: str, required: bool = False, nonempty: bool = False,
                ) -> tuple[str, ...] | None:
        full = f"{prefix}{key}"
        if key not in d:
            if required:
                raise self.fail(full, "missing (a list of strings)", show=False)
            return None
        v = d[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(full, "expected a list of strings", v)
        if nonempty and not v:
            raise self.fail(full, "expected at least one string", v)
        return tuple(v)

    def commands(self, d: dict, key: str, prefix: str) -> tuple[tuple[str, ...], ...]:
        full = f"{prefix}{key}"
        v = d.get(key, [])
        if not isinstance(v, list) or not all(isinstance(c, list) and c and all(isinstance(x, str) for x in c)
                                              for c in v):
            raise self.fail(full, "expected a list of commands, each a non-empty list of strings", v)
        return tuple(tuple(c) for c in v)

    def int(self, d: dict, key: str, prefix: str, low: int = 1) -> int | None:
        full = f"{prefix}{key}"
        if key not in d:
            return None
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(full, f"expected an integer >= {low}", v)
        return v

    def number(self, d: dict, key: str, prefix: str) -> float | None:
        full = f"{prefix}{key}"
        if key not in d:
            return None
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise self.fail(full, "expected a positive number", v)
        return float(v)

    def template(self, args: tuple[str, ...] | None, key: str, allowed: set[str], here: Path) -> tuple[str, ...] | None:
        """Check a command or option template's {placeholders}; {here} is resolved now."""
        if args is None:
            return None
        out = []
        for a in args:
            try:
                names = [f for _, f, spec, conv in string.Formatter().parse(a) if f is not None]
            except ValueError as e:
                raise self.fail(key, f"not a valid template ({e}; write {{{{ and }}}} for literal braces)", a)
            for n in names:
                if n != "here" and n not in allowed:
                    raise self.fail(key, f"unknown placeholder {{{n}}} (here: "
                                         f"{', '.join('{' + x + '}' for x in sorted(allowed | {'here'}))})", a)
            out.append(a.replace("{here}", str(here)) if "{here}" in a else a)
        return tuple(out)


TOP_KEYS = {"name", "description", "app", "value", "traffic", "tiers", "result", "default_tier"}
APP_KEYS = {"name", "binary", "variant", "options", "roles", "reads_rules", "tx_port"}
VALUE_KEYS = {"from", "path", "unit", "about"}
TRAFFIC_KEYS = {"source", "capture", "tgen", "client"}
CAPTURE_KEYS = {"generator", "file", "sizes", "default_packets"}
TGEN_KEYS = {"args", "frame_bytes"}
CLIENT_KEYS = {"vdevs", "address", "command", "setup", "teardown", "check", "input", "timeout_s", "mbufs",
               "mbuf_size", "stop"}
TIER_KEYS = {"capture_packets", "packets", "duration"}
RESULT_FROMS = ("stats", "client", "check")


def read_spec(path: Path, builtin: bool = False) -> WorkloadSpec:
    """Parse and check one workload file."""
    file = path if builtin else path.resolve()
    r = _Reader(path)
    try:
        text = file.read_text()
    except OSError as e:
        raise WorkloadFileError(f"workload file {path}: cannot read it ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise WorkloadFileError(f"workload file {path}: not UTF-8 text ({e})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise WorkloadFileError(f"workload file {path}: not TOML ({e})") from None
    here = file.parent
    if "launch" not in doc:
        r.known(doc, "", TOP_KEYS)
    name = r.str(doc, "name", "", required=True)
    if not NAME_RE.match(name):
        raise r.fail("name", "expected lower-case letters, digits, '.', '_' or '-', starting with a letter "
                             "or digit, at most 63", name)
    description = r.str(doc, "description", "", default="")
    if "launch" in doc:  # a program we did not write (program_file.py)
        from .program_file import read_program

        got = read_program(r, doc, here)
        return WorkloadSpec(name=name, app=name, source="program", description=description, roles=(),
                            value_from=got.program.value.source, value_path=got.value_path, unit=got.unit,
                            value_about=got.about, file=None if builtin else file, builtin=builtin,
                            program=got.program)

    app = r.table(doc, "app", "", APP_KEYS, required=True)
    app_name = r.str(app, "name", "app.", required=True)
    binary = r.template((r.str(app, "binary", "app."),) if "binary" in app else None, "app.binary", BUILD_VARS,
                        here)
    if binary is not None and "{" not in binary[0] and not Path(binary[0]).is_absolute():
        binary = (str(here / binary[0]),)
    variant = r.str(app, "variant", "app.")
    options = r.template(r.strings(app, "options", "app.") or (), "app.options", OPTION_VARS, here)
    roles = r.strings(app, "roles", "app.") or ("R", "P", "T")
    if roles != ("R", "P", "T"):
        raise r.fail("app.roles", 'the runtime runs R -> P -> T pipelines (runtime/pp_app.h): expected '
                                  '["R", "P", "T"]; other role sets are not supported', list(roles))
    reads_rules = app.get("reads_rules", False)
    if not isinstance(reads_rules, bool):
        raise r.fail("app.reads_rules", "expected true or false", reads_rules)
    tx_port = app.get("tx_port", 1)
    if tx_port not in (0, 1) or isinstance(tx_port, bool):
        raise r.fail("app.tx_port", "expected 1 (a port of its own: net_null behind T) or 0 (the port R receives "
                                    "from)", tx_port)

    value = r.table(doc, "value", "", VALUE_KEYS) or {}
    v_from = r.str(value, "from", "value.", default=DEFAULT_VALUE[0], choices=RESULT_FROMS)
    v_path = r.str(value, "path", "value.", default=DEFAULT_VALUE[1])
    unit = r.str(value, "unit", "value.", default=DEFAULT_VALUE[2])
    about = r.str(value, "about", "value.", default=DEFAULT_VALUE[3] if v_path == DEFAULT_VALUE[1] else v_path)

    traffic = r.table(doc, "traffic", "", TRAFFIC_KEYS, required=True)
    source = r.str(traffic, "source", "traffic.", required=True, choices=("capture", "client"))
    capture = tgen = client = None
    tgen_bytes = None
    cap = r.table(traffic, "capture", "traffic.", CAPTURE_KEYS, required=source == "capture")
    if cap is not None:
        if source != "capture":
            raise r.fail("traffic.capture", f"a capture goes with traffic.source = \"capture\", not {source!r}",
                         show=False)
        gen = r.template(r.strings(cap, "generator", "traffic.capture.", nonempty=True), "traffic.capture.generator",
                         GEN_VARS, here)
        fixed = r.str(cap, "file", "traffic.capture.")
        if (gen is None) == (fixed is None):
            raise r.fail("traffic.capture", "give exactly one of 'generator' (a command that writes {output}) "
                                            "and 'file' (one capture)", show=False)
        if gen is not None and not any("{output}" in a for a in gen):
            raise r.fail("traffic.capture.generator", "the command must write {output}", list(gen))
        digest = None
        if fixed is not None:
            fixed = r.template((fixed,), "traffic.capture.file", BUILD_VARS, here)[0]
            if "{" not in fixed:
                p = Path(fixed) if Path(fixed).is_absolute() else here / fixed
                try:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                except OSError as e:
                    raise r.fail("traffic.capture.file", f"cannot read the capture ({e.strerror})", fixed) from None
                fixed = str(p)
        capture = Capture(gen, fixed, digest, r.str(cap, "sizes", "traffic.capture.",
                                                    default="the generator's size mix" if gen else "the capture's"),
                          r.int(cap, "default_packets", "traffic.capture."))
    tg = r.table(traffic, "tgen", "traffic.", TGEN_KEYS)
    if tg is not None:
        if source != "capture":
            raise r.fail("traffic.tgen", "pp-tgen feeds capture workloads (traffic.source = \"capture\")",
                         show=False)
        tgen = r.template(r.strings(tg, "args", "traffic.tgen.", required=True, nonempty=True), "traffic.tgen.args",
                          BUILD_VARS, here)
        tgen_bytes = r.int(tg, "frame_bytes", "traffic.tgen.", low=60)

    tiers, tier_params = _tiers(r, doc, source)
    cl = r.table(traffic, "client", "traffic.", CLIENT_KEYS, required=source == "client")
    default_tier = r.str(doc, "default_tier", "")
    if cl is not None:
        if source != "client":
            raise r.fail("traffic.client", f"a client goes with traffic.source = \"client\", not {source!r}",
                         show=False)
        extra = tier_params
        p = "traffic.client."
        client = Client(
            vdevs=r.template(r.strings(cl, "vdevs", p, required=True, nonempty=True), p + "vdevs", VDEV_VARS, here),
            address=_cidr(r, cl, p + "address"),
            command=r.template(r.strings(cl, "command", p, required=True, nonempty=True), p + "command",
                               CLIENT_VARS | extra, here),
            setup=tuple(r.template(c, p + "setup", CLIENT_VARS | extra, here) for c in r.commands(cl, "setup", p)),
            teardown=tuple(r.template(c, p + "teardown", CLIENT_VARS | extra, here)
                           for c in r.commands(cl, "teardown", p)),
            input=r.template(r.strings(cl, "input", p, nonempty=True), p + "input", INPUT_VARS | extra, here),
            check=r.template(r.strings(cl, "check", p, nonempty=True), p + "check", CLIENT_VARS | extra, here),
            timeout_s=r.number(cl, "timeout_s", p) or 120.0,
            mbufs=r.int(cl, "mbufs", p, low=1023) or 8191,
            mbuf_size=r.int(cl, "mbuf_size", p, low=128) or 2048,
            stop=r.str(cl, "stop", p, default="sigint", choices=("sigint", "exit")))
        if extra and default_tier is None:
            raise r.fail("default_tier", f"missing: the client's commands use tier parameters "
                                         f"({', '.join(sorted(extra))}), and assign measures with one tier's",
                         show=False)
    if default_tier is not None and default_tier not in tiers:
        raise r.fail("default_tier", f"not a tier of this file ({', '.join(tiers) or 'none'})", default_tier)
    if builtin and tuple(tiers) != TIERS:
        raise r.fail("tiers", f"a packaged workload has every tier ({', '.join(TIERS)})", list(tiers))

    result = doc.get("result", {})
    if not isinstance(result, dict):
        raise r.fail("result", "expected a table of name = \"stats.PATH\" or \"client.PATH\"", result)
    for k, v in result.items():
        if not isinstance(v, str) or v.split(".", 1)[0] not in RESULT_FROMS or "." not in v:
            raise r.fail(f"result.{k}", "expected \"stats.PATH\" (the app's statistics JSON), \"client.PATH\" "
                                        "(the JSON object the client prints last) or \"check.PATH\" (the check's)",
                         v)
        if not v.startswith("stats.") and source != "client":
            raise r.fail(f"result.{k}", "there is no client: traffic.source is \"capture\"", v)
    if v_from != "stats" and source != "client":
        raise r.fail("value.from", "there is no client: traffic.source is \"capture\"", v_from)
    return WorkloadSpec(name=name, app=app_name, source=source, description=description,
                        binary=binary[0] if binary else None, variant=variant, options=options, roles=roles,
                        reads_rules=reads_rules, tx_port=tx_port, value_from=v_from, value_path=v_path,
                        unit=unit, value_about=about,
                        capture=capture, tgen=tgen, tgen_frame_bytes=tgen_bytes, client=client,
                        default_tier=default_tier, tiers=tiers, result=dict(result),
                        file=None if builtin else file, builtin=builtin)


def _cidr(r: _Reader, d: dict, key: str) -> str:
    import ipaddress

    v = r.str(d, key.rsplit(".", 1)[1], key.rsplit(".", 1)[0] + ".", required=True)
    try:
        ipaddress.ip_interface(v)
    except ValueError:
        raise r.fail(key, "expected an address with its prefix length, e.g. 198.18.0.2/24", v) from None
    if "/" not in v:
        raise r.fail(key, "expected an address with its prefix length, e.g. 198.18.0.2/24", v)
    return v


def _tiers(r: _Reader, doc: dict, source: str) -> tuple[dict[str, Tier], set[str]]:
    """The tiers, in TIERS order, and the parameter names every one of them gives."""
    t = doc.get("tiers", {})
    if not isinstance(t, dict):
        raise r.fail("tiers", "expected a table of tiers", t)
    out: dict[str, Tier] = {}
    params: set[str] | None = None
    for name in sorted(t, key=lambda n: TIERS.index(n) if n in TIERS else len(TIERS)):
        key = f"tiers.{name}"
        if name not in TIERS:
            raise r.fail(key, f"unknown tier (tiers: {', '.join(TIERS)})", t[name])
        d = t[name]
        if not isinstance(d, dict):
            raise r.fail(key, "expected a table", d)
        extra = {}
        for k, v in d.items():
            if k in TIER_KEYS:
                continue
            if source != "client":
                raise r.fail(f"{key}.{k}", f"unknown key (known here: {', '.join(sorted(TIER_KEYS))}; other "
                                           f"parameters go with a client)", v)
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise r.fail(f"{key}.{k}", "a tier parameter is a number or a string", v)
            extra[k] = v
        tier = Tier(name, r.int(d, "capture_packets", key + "."), r.int(d, "packets", key + "."),
                    r.number(d, "duration", key + "."), extra)
        if tier.packets is not None and tier.duration is not None:
            raise r.fail(key, "give 'packets' or 'duration' (the window), not both", d)
        if source == "capture" and tier.packets is None and tier.duration is None:
            raise r.fail(key, "missing the window: 'packets' (per instance) or 'duration' (seconds)", d)
        out[name] = tier
        params = set(extra) if params is None else params & set(extra)
    return out, params or set()
