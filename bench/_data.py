"""Shared loaders for the bench scripts: real passages and claims from ../shared/datasets.

Nothing here is imported by the app; the bench scripts run offline on the copied datasets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# shared/ sits beside the repository, on developers' machines and in CI alike.
DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
_EVIDENCE = re.compile(r"^\s*(?:\[\d+\]\s*)?(\S+)\s*(.*)$", re.S)


def expertqa_claims() -> list[dict]:
    """Every claim of ExpertQA rand_test with question, system and parsed evidence passages."""
    claims: list[dict] = []
    with open(DATASETS / "expertqa" / "rand_test.jsonl") as fh:
        for line in fh:
            row = json.loads(line)
            for system, answer in row["answers"].items():
                for claim in answer["claims"] or []:
                    passages = []
                    for ev in claim.get("evidence") or []:
                        m = _EVIDENCE.match(ev)
                        if m and m.group(2).strip():
                            passages.append(m.group(2).strip())
                    claims.append(
                        {
                            "question": row["question"],
                            "system": system,
                            "claim": claim["claim_string"],
                            "support": claim.get("support"),
                            "passages": passages,
                        }
                    )
    return claims


def attributionbench_rows() -> list[dict]:
    rows: list[dict] = []
    for name in ("test_all_subset_balanced_sampled500.jsonl", "test_ood_all_subset_balanced.jsonl"):
        with open(DATASETS / "attributionbench" / name) as fh:
            rows.extend(json.loads(line) for line in fh)
    return rows


def real_passages() -> list[str]:
    """Distinct real passages (web excerpts, Wikipedia paragraphs, human-quoted evidence)."""
    seen: dict[str, None] = {}
    for claim in expertqa_claims():
        for passage in claim["passages"]:
            seen.setdefault(passage, None)
    for row in attributionbench_rows():
        for ref in row["references"]:
            if ref.strip():
                seen.setdefault(ref, None)
    return list(seen)
