"""Label distributions across runs: identical ones are suspicious, since real analysis varies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def identical_groups(
    counts: Mapping[str, Mapping[str, int]], *, min_total: int = 5
) -> list[list[str]]:
    """Groups (systems or imports) whose label counts are exactly the same.

    Counts, not shares: two different runs landing on the very same numbers of verified,
    likely and unknown claims is what a copied or constant output looks like. Groups with
    fewer than `min_total` claims are too small for the coincidence to mean anything.
    """
    by_signature: dict[tuple, list[str]] = {}
    for group, group_counts in counts.items():
        total = sum(group_counts.values())
        if total < min_total:
            continue
        signature = tuple(sorted((k, v) for k, v in group_counts.items() if v))
        by_signature.setdefault(signature, []).append(group)
    return [sorted(groups) for groups in by_signature.values() if len(groups) > 1]


def flag_map(groups: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """For each flagged group, the other groups it is identical to."""
    flags: dict[str, list[str]] = {}
    for members in groups:
        for member in members:
            flags[member] = [m for m in members if m != member]
    return flags
