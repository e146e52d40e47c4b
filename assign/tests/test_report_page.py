"""`assign report`'s page in a browser: headless Chromium (Debian's
`chromium`, which tools/setup.sh installs) renders it 1280 px wide, and
nothing on it is wider than that (no element past the right edge, no box
that scrolls sideways), every figure loads, and every number the page
gives for a key of `assign estimate --json` is that key's value.

Chromium is driven over the DevTools protocol on a pipe (fds 3 and 4,
--remote-debugging-pipe): every step waits for Chromium's answer or event,
never for a fixed time, with timeouts generous enough for a loaded machine."""
from __future__ import annotations

import fcntl
import json
import math
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_assign

VIEWPORT = 1280
STEP_TIMEOUT_S = 120.0
# The keys of `assign estimate --json` the page must give (the brief of the
# report: the optimum of means with its interval, the paper's UPB and its
# interval, the gaps); the page may give more, each checked the same way.
REQUIRED_KEYS = ("optimum_mean.estimate", "optimum_mean.ci_low", "optimum_mean.ci_high", "upb", "upb_ci_low",
                 "upb_ci_high", "gap_pct", "paper_gap_pct")

# Run in the page once it has loaded: what overflows, which images loaded,
# and every <data data-key> figure.
PAGE_CHECK = """(async () => {
  await Promise.all([...document.images].map(i => i.complete ? null :
    new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })));
  const vw = document.documentElement.clientWidth;  // the window less a vertical scrollbar
  const wide = [];
  const name = el => el.tagName.toLowerCase() + (el.className ? '.' + el.className : '')
    + ' "' + (el.textContent || '').trim().slice(0, 60) + '"';
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const clipped = getComputedStyle(el).overflowX !== 'visible';
    if (r.right > vw + 0.5 || r.left < -0.5) wide.push('past the edge: ' + name(el));
    else if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && clipped)
      wide.push('scrolls sideways: ' + name(el));
    else if (el.clientWidth > 0 && r.left + el.scrollWidth > vw + 1)
      wide.push('spills past the edge: ' + name(el));
  }
  return {
    window: window.innerWidth, viewport: vw, pageWidth: document.documentElement.scrollWidth, wide,
    images: [...document.images].map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
    figures: [...document.querySelectorAll('data[data-key]')].map(
      d => ({key: d.dataset.key, value: d.getAttribute('value'), text: d.textContent})),
  };
})()"""


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON
    messages ending in a NUL byte, commands on fd 3, answers and events on
    fd 4."""

    def __init__(self, profile: Path) -> None:
        exe = shutil.which("chromium")
        assert exe, "chromium is not installed (Debian package chromium; tools/setup.sh installs it)"
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()

        def fds() -> None:  # in the child: its fds 3 and 4, whatever numbers the pipes got
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_r, from_w)]
            for fd, want in zip(high, (3, 4)):
                os.dup2(fd, want)  # inheritable
                os.close(fd)

        # --no-sandbox: tests run as root, where Chromium's sandbox refuses to start; it
        # loads only the files this test wrote
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            # close_fds would close 3 and 4 after preexec_fn made them; the other pipes of this
            # process are not inheritable (PEP 446), so exec closes them anyway
            preexec_fn=fds, close_fds=False, start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self._events: list[dict[str, Any]] = []

    def close(self) -> None:
        os.close(self._to_w)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self._from_r)
        if self.proc.stderr:
            self.proc.stderr.close()

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_r], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"chromium did not answer within {STEP_TIMEOUT_S:g} s")
            chunk = os.read(self._from_r, 1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.stderr else ""
                raise AssertionError(f"chromium closed its pipe (exit {self.proc.poll()}): {err}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                assert "error" not in m, f"{method}: {m['error']}"
                return m["result"]
            self._events.append(m)

    def wait_event(self, method: str, session: str) -> None:
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:
            for i, m in enumerate(self._events):
                if m.get("method") == method and m.get("sessionId") == session:
                    del self._events[: i + 1]
                    return
            self._events.append(self._read(deadline))


def render(page: Path, profile: Path) -> dict[str, Any]:
    """PAGE_CHECK's answer for page at VIEWPORT px."""
    dt = DevTools(profile)
    try:
        target = dt.send("Target.createTarget", url="about:blank")["targetId"]
        s = dt.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        dt.send("Page.enable", s)
        dt.send("Emulation.setDeviceMetricsOverride", s, width=VIEWPORT, height=900, deviceScaleFactor=1,
                mobile=False)
        dt.send("Page.navigate", s, url=page.as_uri())
        dt.wait_event("Page.loadEventFired", s)
        r = dt.send("Runtime.evaluate", s, expression=PAGE_CHECK, awaitPromise=True, returnByValue=True)
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"]["value"]
    finally:
        dt.close()


def at(d: Any, path: str) -> Any:
    for part in path.split("."):
        d = d.get(part) if isinstance(d, dict) else None
    return d


def shown_matches(text: str, value: float) -> bool:
    """Whether the number a person reads (thousands separators, %, unit)
    is value rounded to the digits shown."""
    token = text.replace(",", "").split()[0].rstrip("%")
    shown = float(token)
    mantissa, _, exp = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return abs(shown - value) <= 0.5 * 10 ** (int(exp or 0) - decimals) * (1 + 1e-9)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A noisy modelled run with its noise repetitions and a chosen placement
    (so the page has the optimum of means and the gap), its report, and its
    `assign estimate --json`."""
    d = tmp_path_factory.mktemp("report_page")
    db = d / "t2.db"
    for args in (("sample", "--n", "1000", "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2",
                  "--noise", "0.02", "--db", str(db), "--quiet"),
                 ("best", "--db", str(db), "--out", str(d / "best.json")),
                 ("report", "--db", str(db), "--out", str(d / "report"))):
        r = run_assign(*args, timeout=600)
        assert r.returncode == 0, f"assign {args[0]}: {r.stderr}"
    r = run_assign("estimate", "--db", str(db), "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    return d / "report" / "index.html", json.loads(r.stdout)


def test_report_page_fits_1280_px_loads_its_figures_and_gives_estimates_numbers(
        report: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    page, est = report
    got = render(page, tmp_path / "chromium-profile")

    # the window is 1280 px; what the page may fill is that less a vertical scrollbar
    assert got["window"] == VIEWPORT and VIEWPORT - 20 <= got["viewport"] <= VIEWPORT
    assert got["pageWidth"] <= got["viewport"] and not got["wide"], got["wide"]

    pngs = sorted(p.name for p in page.parent.glob("*.png"))
    assert len(pngs) == 8  # every figure drawn (a run this size has an estimate)
    assert sorted(i["src"] for i in got["images"]) == pngs
    assert all(i["ok"] for i in got["images"]), [i["src"] for i in got["images"] if not i["ok"]]

    figures = {f["key"]: f for f in got["figures"]}
    assert len(figures) == len(got["figures"]), "a key given twice"
    assert set(REQUIRED_KEYS) <= set(figures), sorted(set(REQUIRED_KEYS) - set(figures))
    for key, f in figures.items():
        want = at(est, key)
        if want is None:  # absent, or an open end: the page gives no number for it
            assert f["value"] == "" and not any(c.isdigit() for c in f["text"]), (key, f)
            continue
        assert isinstance(want, (int, float)), (key, want)
        assert math.isclose(float(f["value"]), want, rel_tol=1e-9, abs_tol=1e-12), (key, f["value"], want)
        assert shown_matches(f["text"], want), (key, f["text"], want)
    # a run with a chosen placement: the gap and both ends of the optimum's interval are numbers
    assert all(at(est, k) is not None for k in ("optimum_mean.estimate", "optimum_mean.ci_low", "gap_pct"))
