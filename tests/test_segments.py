from hypothesis import given
from hypothesis import strategies as st

from audit.segments import segment


def test_segments_carry_the_tags_of_covering_spans():
    pieces = segment("abcdef", [(1, 4, "a"), (2, 6, "b")])

    assert [(p.text, sorted(p.tags)) for p in pieces] == [
        ("a", []),
        ("b", ["a"]),
        ("cd", ["a", "b"]),
        ("ef", ["b"]),
    ]


def test_out_of_range_and_empty_spans_are_ignored():
    pieces = segment("abc", [(2, 99, "x"), (1, 1, "y"), (-5, 1, "z")])

    assert [(p.text, sorted(p.tags)) for p in pieces] == [("a", ["z"]), ("b", []), ("c", ["x"])]


@given(
    st.text(max_size=60),
    st.lists(st.tuples(st.integers(-5, 70), st.integers(-5, 70), st.integers(0, 3)), max_size=6),
)
def test_pieces_join_back_to_the_text(text, spans):
    pieces = segment(text, spans)

    assert "".join(p.text for p in pieces) == text
    assert all(text[p.start : p.end] == p.text for p in pieces)
