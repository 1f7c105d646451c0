"""Paths and small builders shared by the format tests.

Kept free of Django so these tests run with `-p no:django`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "fixtures" / "samples"
EXPERTQA_SLICE = ROOT / "fixtures" / "expertqa" / "expertqa_slice15.jsonl"
EXPERTQA_FULL = ROOT / "fixtures" / "expertqa" / "rand_test.jsonl"


def jsonl(*records: Any) -> bytes:
    """Encode records as JSON Lines, one per line."""
    return "".join(json.dumps(record) + "\n" for record in records).encode()


MISSING = object()


def native_line(**overrides: Any) -> dict[str, Any]:
    """A valid native answer; keyword arguments replace fields, MISSING removes one."""
    record: dict[str, Any] = {
        "question_id": "q1",
        "question": "How long is the warranty?",
        "system": "gpt-4o rerank v3",
        "answer": "The warranty lasts two years [1].",
        "passages": [{"title": "Warranty", "url": "https://example.com/w", "text": "Two years."}],
    }
    for key, value in overrides.items():
        if value is MISSING:
            record.pop(key, None)
        else:
            record[key] = value
    return record
