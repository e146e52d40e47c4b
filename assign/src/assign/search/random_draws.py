"""`--sampler random`: the paper's search, iid uniform placements until the
budget is spent; what it deploys is its best single value, one lucky
measurement (`assign best` chooses among them by re-measuring)."""
from __future__ import annotations


class RandomSearch:
    name = "random"

    def describe(self) -> str:
        return "iid uniform placements (the paper's), each measured once"

    def search(self, ledger, rng, starts, report) -> None:
        sp = ledger.space
        seed = int(rng.integers(2 ** 31))
        done = 0
        while ledger.remaining > 0:
            count = min(4096, ledger.remaining)
            rows = sp.random(seed, done, count)
            ledger.measure(sp.keys(rows), rows)
            done += count
