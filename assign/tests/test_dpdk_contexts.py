"""--contexts: parsing, canonical form, and the restricted sampling space."""
from __future__ import annotations

import pytest

from assign.topology import ContextsError, format_contexts, parse_contexts, restrict_topology
from assign.topology import get_machine


def test_parse_and_format_round_trip() -> None:
    assert parse_contexts("0-2,5, 7") == [0, 1, 2, 5, 7]
    assert parse_contexts("3,1,1") == [1, 3]
    assert format_contexts([7, 0, 1, 2, 5]) == "0-2,5,7"
    assert format_contexts(parse_contexts("4")) == "4"


@pytest.mark.parametrize("bad, why", [("", "empty list"), ("a", "'a' is not a number"),
                                      ("3-1", "runs backwards"), ("1,-2", "not a number or a range"),
                                      ("0-x", "not a number or a range")])
def test_bad_lists_say_what_is_wrong(bad: str, why: str) -> None:
    with pytest.raises(ContextsError, match=why):
        parse_contexts(bad)


def test_restricted_t2_keeps_the_tree_of_the_chosen_contexts() -> None:
    t2 = get_machine("ultrasparc-t2")
    # contexts 0-7 are core 0 (two pipelines of four); 8-11 one pipeline of core 1
    r = restrict_topology(t2, parse_contexts("0-11"))
    assert r.n_contexts == 12 and list(r.os_index) == list(range(12))
    assert "contexts 0-11" in r.description
    levels = r.level_ids
    assert len(set(levels[2])) == 2      # two cores left
    assert len(set(levels[1])) == 3      # three pipelines left
    assert t2.n_contexts == 64           # the original is untouched


def test_contexts_that_do_not_exist_are_refused_with_the_machines_list() -> None:
    t2 = get_machine("ultrasparc-t2")
    with pytest.raises(ContextsError, match=r"context\(s\) 64-65 are not hardware contexts of ultrasparc-t2 "
                                            r"\(it has 0-63\)"):
        restrict_topology(t2, [0, 64, 65])


def test_all_contexts_is_the_machine_itself() -> None:
    local = get_machine()
    assert restrict_topology(local, [int(o) for o in local.os_index]) is local
