from audit.distributions import flag_map, identical_groups


def test_identical_label_counts_across_runs_are_flagged():
    counts = {
        "run-a": {"verified": 4, "likely": 3, "unknown": 3},
        "run-b": {"verified": 4, "likely": 3, "unknown": 3},
        "run-c": {"verified": 5, "likely": 3, "unknown": 2},
    }

    assert identical_groups(counts) == [["run-a", "run-b"]]


def test_small_groups_are_not_flagged():
    counts = {"a": {"verified": 1, "unknown": 1}, "b": {"verified": 1, "unknown": 1}}

    assert identical_groups(counts) == []


def test_zero_counts_do_not_break_identity():
    counts = {"a": {"verified": 6, "likely": 0}, "b": {"verified": 6}}

    assert flag_map(identical_groups(counts)) == {"a": ["b"], "b": ["a"]}
