import pytest

from audit.judgments import (
    CONTRADICTED,
    INACCESSIBLE,
    NOT_SUPPORTED,
    PARTIAL,
    SUPPORTED,
    UNCLEAR,
    derived_verdict,
)


@pytest.mark.parametrize(
    ("atomic", "verdict"),
    [
        ([SUPPORTED, SUPPORTED], SUPPORTED),
        ([SUPPORTED, NOT_SUPPORTED], PARTIAL),
        ([PARTIAL, SUPPORTED], PARTIAL),
        ([NOT_SUPPORTED, NOT_SUPPORTED], NOT_SUPPORTED),
        ([CONTRADICTED, NOT_SUPPORTED], CONTRADICTED),
        ([INACCESSIBLE, INACCESSIBLE], INACCESSIBLE),
        ([UNCLEAR, NOT_SUPPORTED], NOT_SUPPORTED),
        ([SUPPORTED, None], None),
        ([SUPPORTED, ""], None),
        ([], None),
    ],
)
def test_derived_verdict_is_supported_only_if_every_atomic_claim_is(atomic, verdict):
    assert derived_verdict(atomic) == verdict
