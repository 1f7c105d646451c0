"""Paths and small builders shared by the format tests.

Kept free of Django so these tests run with `-p no:django`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "fixtures" / "samples"
EXPERTQA_SLICE = ROOT / "fixtures" / "expertqa" / "expertqa_slice15.jsonl"
EXPERTQA_FULL = ROOT / "fixtures" / "expertqa" / "rand_test.jsonl"
# The public datasets sit beside the checkout (as CI lays them out) unless
# CITEAUDIT_DATASETS names another folder; tests that read them skip, saying so, without them.
DATASETS = Path(os.environ.get("CITEAUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")


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


CITEAUDIT_V1 = ROOT / "fixtures" / "citeaudit" / "export-v1.jsonl"
# The claim fields of a version 1 line for an answer without claims.
_V1_NO_CLAIM = {
    "claim": None,
    "assigned": [],
    "machine_check": None,
    "sheets": [],
    "rater_labels": [],
    "gold_source": "unresolved",
    "gold": None,
}


def as_citeaudit_v1(data: bytes) -> bytes:
    """A version 2 citeaudit export rewritten as version 1 wrote it: one line per claim,
    each repeating its answer's question, answer and passages (fixtures/citeaudit holds a
    file that version 1's writer made, which the tests compare this with)."""
    answers: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for raw in data.decode().splitlines():
        record = json.loads(raw)
        kind = record.pop("record")
        record["citeaudit"] = 1
        if kind == "answer":
            answers.append((record, []))
        else:
            del record["citeaudit"], record["answer_hash"]
            # Nor suggestions.
            record.pop("suggestions", None)
            # Version 1 was replaced before claims and judgments gained "answers the
            # question".
            for judged in [record["claim"], *record.get("sheets", []), record.get("gold") or {}]:
                judged.pop("answers_question", None)
            answers[-1][1].append(record)
    text = "".join(
        json.dumps(answer | claim, ensure_ascii=False) + "\n"
        for answer, claims in answers
        for claim in claims or [_V1_NO_CLAIM]
    )
    for char in ("\u2028", "\u2029", "\x85"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text.encode()
