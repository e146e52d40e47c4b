"""netferret's C core (nf-query and nf-build, no DPDK, no root) against the
Python reference pipeline (nf_reference.py: Pillow, numpy, POT): the same
resized pixels, regions, vectors, weights, LSH neighbours and candidates,
bit for bit, on the test tier and the first queries of simsmall; every EMD
the core computes on both tiers against POT's ot.emd2 (and a sample
against scipy's linprog) to 1e-5 relative; the extractor on a sample of
database images; SRM on images whose regions are known by construction;
the LSH's recall of the exact 2K nearest and the precision at K of the
synthetic categories, reported (and held above a floor)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import netferret_input as ni  # noqa: E402
import nf_reference as ref  # noqa: E402

pytestmark = pytest.mark.offline


def nf_query(build_dir: Path, tier: Path, *args: str) -> list[dict]:
    exe = build_dir / "apps" / "netferret" / "nf-query"
    k = json.loads((tier / "manifest.json").read_text())["k"]
    p = subprocess.run([str(exe), str(tier / "db.bin"), str(tier / "queries.pack"), "--k", str(k), *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert lines[-1]["emd_capped"] == 0
    return lines[:-1]


@pytest.mark.parametrize("tier,checked", [("test", 1), ("simsmall", 3)])
def test_core_equals_the_reference(build_dir: Path, nf_tier, tier: str, checked: int) -> None:
    d = nf_tier(tier)
    db = ref.read_db(d / "db.bin")
    queries = ni.read_pack(d / "queries.pack")
    got = nf_query(build_dir, d, "--trace", "--rgb")
    assert [g["query"] for g in got] == [n for n, _ in queries]
    for (name, jpeg), c in list(zip(queries, got))[:checked]:
        assert c["status"] == "ok"
        rgb = ref.resize(ref.decode(jpeg))
        assert rgb.tobytes().hex() == c["rgb"], name
        r = ref.query(db, jpeg, db.top_k)
        assert r.regions == c["regions"], name
        assert np.array_equal(r.vec.reshape(-1), np.array(c["vec"], dtype=np.float32)), name
        assert np.array_equal(r.weight, np.array(c["weight"], dtype=np.float32)), name
        assert r.hits == c["hits"] and r.cand == c["cand"], name
        assert ref.same_answer(ref.parse_answer(c["answer"]), r.top), (name, c["answer"], r.top)


@pytest.mark.parametrize("tier", ["test", "simsmall"])
def test_every_emd_equals_pot(build_dir: Path, nf_tier, tier: str) -> None:
    """Every candidate's EMD of every query of the tier, from the core's own query
    vectors, against ot.emd2; a sample also against scipy's linprog."""
    from scipy.optimize import linprog

    d = nf_tier(tier)
    db = ref.read_db(d / "db.bin")
    n = worst = 0
    for c in nf_query(build_dir, d, "--trace"):
        qv = np.array(c["vec"], dtype=np.float32).reshape(-1, ref.DIM)
        qw = np.array(c["weight"], dtype=np.float32)
        for img, dist in zip(c["cand"], c["cand_dist"]):
            want = ref.emd(qv, qw, *db.image_vectors(img))
            worst = max(worst, abs(dist - want) / max(want, 1e-300))
            n += 1
            if n % 97 == 1:  # the transportation LP itself, by HiGHS
                iv, iw = db.image_vectors(img)
                a = qw.astype(float) / qw.astype(float).sum()
                b = iw.astype(float) / iw.astype(float).sum()
                cost = np.sqrt(((qv[:, None, :].astype(float) - iv[None, :, :].astype(float)) ** 2).sum(-1))
                na, nb = len(a), len(b)
                eq = np.zeros((na + nb, na * nb))
                for i in range(na):
                    eq[i, i * nb:(i + 1) * nb] = 1
                for j in range(nb):
                    eq[na + j, j::nb] = 1
                lp = linprog(cost.reshape(-1), A_eq=eq, b_eq=np.concatenate([a, b]), bounds=(0, None),
                             method="highs")
                assert lp.status == 0 and abs(lp.fun - dist) <= 1e-5 * lp.fun, (img, lp.fun, dist)
        assert [t[1] for t in c["top"]] == sorted(t[1] for t in c["top"])
    print(f"{tier}: {n} EMD values, largest relative difference to ot.emd2 {worst:.2e}")
    assert n > 0 and worst <= 1e-5


def test_extractor_equals_the_reference_on_database_images(nf_tier) -> None:
    """The database's vectors (made by nf-build, the C extractor) of a sample of
    simsmall's images and of the test tier's, against features() here."""
    for tier, sample in (("test", [0]), ("simsmall", [0, 1, 141, 1000, 2500, 3543])):
        d = nf_tier(tier)
        db = ref.read_db(d / "db.bin")
        images = ni.read_pack(d / "images.pack")
        for i in sample:
            vec, wt, size = ref.features(images[i][1])
            s, e = int(db.img_first[i]), int(db.img_first[i + 1])
            assert np.array_equal(vec, db.vec[s:e]) and np.array_equal(wt, db.weight[s:e]), (tier, i)
            assert np.array_equal(size, db.size[s:e]) and db.names[i] == images[i][0]


def seg(build_dir: Path, rgb: np.ndarray, tmp_path: Path) -> dict:
    f = tmp_path / "img.rgb"
    f.write_bytes(rgb.astype(np.uint8).tobytes())
    p = subprocess.run([str(build_dir / "apps" / "netferret" / "nf-query"), "--seg-rgb", str(f)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def raster_labels(regions: np.ndarray) -> np.ndarray:
    """Any labelling renumbered in raster order of first pixels."""
    first: dict[int, int] = {}
    return np.array([first.setdefault(int(v), len(first)) for v in regions.reshape(-1)])


def test_srm_finds_regions_known_by_construction(build_dir: Path, tmp_path: Path) -> None:
    """Flat shapes of far-apart colours, each of at least 81 pixels, with +-3 of noise:
    SRM's partition is the construction's, and equal to the reference's."""
    rng = np.random.default_rng(5)
    ys, xs = np.mgrid[0:128, 0:128]
    layouts = [
        [("rect", 10, 10, 60, 50), ("ellipse", 90, 80, 25, 30), ("rect", 20, 90, 40, 30)],
        [("rect", 0, 0, 128, 40), ("rect", 0, 88, 128, 40), ("ellipse", 64, 64, 20, 15)],
        [("ellipse", 40, 40, 30, 30), ("ellipse", 95, 95, 25, 25), ("rect", 80, 5, 40, 40),
         ("rect", 5, 85, 30, 35)],
    ]
    colours = np.array([[30, 30, 30], [230, 40, 40], [40, 220, 60], [50, 60, 230], [240, 240, 90]])
    for shapes in layouts:
        region = np.zeros((128, 128), dtype=np.int64)
        for k, (kind, a, b, c, e) in enumerate(shapes, start=1):
            if kind == "rect":
                region[(xs >= a) & (xs < a + c) & (ys >= b) & (ys < b + e)] = k
            else:
                region[((xs - a) / c) ** 2 + ((ys - b) / e) ** 2 <= 1] = k
        rgb = np.clip(colours[region] + rng.integers(-3, 4, size=(128, 128, 3)), 0, 255)
        got = seg(build_dir, rgb, tmp_path)
        want = raster_labels(region)
        assert got["regions"] == want.max() + 1
        assert got["labels"] == want.tolist()
        n, labels = ref.srm(rgb.astype(np.uint8))
        assert n == got["regions"] and labels.tolist() == got["labels"]


def test_srm_properties_on_noise(build_dir: Path, tmp_path: Path) -> None:
    """Whatever SRM makes of noise and gradients: 4-connected regions of at least 81
    pixels, labelled in raster order, the same as the reference's."""
    rng = np.random.default_rng(11)
    ys, xs = np.mgrid[0:128, 0:128]
    for rgb in (rng.integers(0, 256, size=(128, 128, 3)),
                np.clip(np.stack([xs * 2, ys * 2, xs + ys], -1) // 1 + rng.integers(-20, 21, size=(128, 128, 3)),
                        0, 255)):
        got = seg(build_dir, rgb, tmp_path)
        lab = np.array(got["labels"]).reshape(128, 128)
        firsts = [int(np.flatnonzero(lab.reshape(-1) == r)[0]) for r in range(got["regions"])]
        assert firsts == sorted(firsts)
        from scipy import ndimage
        for r in range(got["regions"]):
            mask = lab == r
            assert mask.sum() >= ref.MIN_REGION
            assert ndimage.label(mask)[1] == 1  # 4-connected (the default structure)
        n, labels = ref.srm(rgb.astype(np.uint8))
        assert labels.tolist() == got["labels"]


def test_lsh_recall_and_precision_at_k(build_dir: Path, nf_tier, record_property) -> None:
    """LSH's recall of the exact 2K nearest region vectors (brute force over the whole
    database) and the precision at K of the categories, for every query of the tiers in
    the suite; printed, recorded, and held above floors the synthetic inputs clear."""
    for tier in ("test", "simsmall"):
        d = nf_tier(tier)
        db = ref.read_db(d / "db.bin")
        hit = want = 0
        precision = []
        for c in nf_query(build_dir, d, "--trace"):
            qv = np.array(c["vec"], dtype=np.float32).reshape(-1, ref.DIM)
            for r, q in enumerate(qv):
                d2 = ref.dist2(q, db.vec)
                exact = np.lexsort((np.arange(len(d2)), d2))[:2 * db.top_k]
                hit += len(set(exact.tolist()) & set(c["hits"][r]))
                want += len(exact)
            precision.append(sum(ref.category(n) == ref.category(c["query"]) for n, _ in c["top"]) / db.top_k)
        recall, prec = hit / want, sum(precision) / len(precision)
        print(f"{tier}: LSH recall of the exact 2K nearest {recall:.3f}, precision at K {prec:.3f} (measured)")
        record_property(f"{tier}_lsh_recall", recall)
        record_property(f"{tier}_precision_at_k", prec)
        assert recall >= 0.5
        assert prec >= (0.2 if tier == "test" else 0.8)


def test_tiers_are_deterministic_and_checked_by_digest(build_dir: Path, nf_tier, tmp_path: Path) -> None:
    a, b = ni.make("test", 0, tmp_path / "a", build_dir), ni.make("test", 0, tmp_path / "b", build_dir)
    assert a["files"] == b["files"] and ni.make("test", 1, tmp_path / "c", build_dir)["files"] != a["files"]
    assert all(len(j) < ni.MAX_JPEG for _, j in ni.read_pack(nf_tier("simsmall") / "queries.pack"))
    cached = ni.input_file("test", 0, tmp_path / "cache", build_dir)
    db = cached / "db.bin"
    raw = bytearray(db.read_bytes())
    raw[-10] ^= 0xFF
    db.write_bytes(bytes(raw))
    assert ni.verify(cached) is None  # the digest catches it: made again
    again = ni.input_file("test", 0, tmp_path / "cache", build_dir)
    assert ni.verify(again) is not None and ni.sha256_file(again / "db.bin") == a["files"]["db.bin"]
