"""One bracket matcher for the gate, its loop limits and the dialect rewriter: the three stray-closer policies."""

from __future__ import annotations

import pytest

from t2c_lib.cypher.brackets import Stray, bracket_pairs
from t2c_lib.cypher.lexer import tokenize


def test_balanced_brackets_pair_the_same_under_every_policy():
    tokens = tokenize("MATCH (a)-[r]->(b {x: [1, (2)]}) RETURN a")
    for stray in Stray:
        pairs, unclosed = bracket_pairs(tokens, stray)
        assert unclosed == []
        assert all(tokens[o].text + tokens[c].text in ("()", "[]", "{}") for o, c in pairs.items())
        assert len(pairs) == 6


def test_brackets_inside_strings_and_names_are_not_brackets():
    tokens = tokenize("RETURN ')' AS `(`, [1]")
    assert bracket_pairs(tokens, Stray.SKIP) == ({5: 7}, [])


@pytest.mark.parametrize(
    ("stray", "expected"),
    [
        (Stray.SKIP, ({0: 5, 2: 4}, [])),  # `]` is skipped: `(` stays open and the last `)` closes it
        (Stray.RESET, ({2: 4}, [])),  # `]` ends the matching of `(`; the last `)` has nothing to close
        (Stray.UNWIND, ({2: 4}, [])),  # `]` unwinds past `(` looking for a `[` and drops it
    ],
)
def test_a_stray_closer_follows_its_policy(stray, expected):
    tokens = tokenize("( ] [ x ] )")  # 0 ( 1 ] 2 [ 3 x 4 ] 5 )
    assert bracket_pairs(tokens, stray) == expected


def test_unwind_drops_the_brackets_a_closer_of_another_kind_skips_over():
    tokens = tokenize("( [ x )")  # 0 ( 1 [ 2 x 3 )
    assert bracket_pairs(tokens, Stray.UNWIND) == ({0: 3}, [])
    assert bracket_pairs(tokens, Stray.SKIP) == ({}, [0, 1])
    assert bracket_pairs(tokens, Stray.RESET) == ({}, [])
