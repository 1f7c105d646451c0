"""Dump the matcher's outputs on the bench tasks and the real datasets, to compare two
versions byte for byte when a change must not alter any result (preparing passages,
the index, sentence splitting, number tokens, folding). Run by hand, never in CI:

    .venv/bin/python bench/dump_matcher.py /tmp/before.txt   # on the old code
    .venv/bin/python bench/dump_matcher.py /tmp/after.txt    # on the new code
    cmp /tmp/before.txt /tmp/after.txt

Each line is the repr of one result: an import's plan and rows of each of 3,000 bench tasks
(bench_import.py's one-claim shape); check_claim, rank_sentences(k=5), number and quote
checks of every ExpertQA claim, AttributionBench row and WiCE dev claim; and every
passage's spans, terms, index, numbers and folded text.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _data import DATASETS, attributionbench_rows, expertqa_claims  # noqa: E402
from bench_import import write_one_claim_tasks  # noqa: E402

from audit import bm25, matching  # noqa: E402
from audit.formats.detect import read_native_line  # noqa: E402
from audit.import_plan import answer_content_hash, answer_rows, plan_answers  # noqa: E402
from audit.stored_checks import PassageCache, answer_check_values  # noqa: E402

TASKS = 3000


def main(path: str) -> None:
    with open(path, "w") as out:

        def write(*values: object) -> None:
            out.write(repr(values) + "\n")

        def passage(text: str) -> None:
            prepared = matching.prepare_passage(text)
            index = prepared.index
            write(
                "P",
                prepared.spans,
                sorted(prepared.numbers),
                prepared.folded,
                prepared.sentences,
                sorted(index.occurrences.items()),
                index.lengths,
                sorted(prepared.word_positions.items()),
            )
            write("T", bm25.terms(text.casefold()), matching.fold(text))

        def claim(text: str, cited: list[str], uncited: list[str]) -> None:
            write("C", matching.check_claim(text, cited, uncited))
            write("R", matching.rank_sentences(text, cited + uncited, k=5))
            write("N", matching.ungrounded_numbers(text, cited), matching._number_tokens(text))
            write("Q", matching.verify_quote(text[: len(text) // 2], (cited or [""])[0]))

        with tempfile.TemporaryDirectory() as tmp:
            tasks = Path(tmp) / "tasks.jsonl"
            write_one_claim_tasks(tasks, TASKS)
            lines = tasks.read_bytes().splitlines()
        records = [read_native_line(raw, "tasks.jsonl", i + 1) for i, raw in enumerate(lines)]
        for plan, record in zip(plan_answers(records, PassageCache()), records, strict=True):
            write("B", answer_content_hash(record), plan)
            # The rows an import writes, its JSON columns encoded.
            write("W", answer_rows(record, plan))
        for record in records[:300]:
            for p in record.passages:
                passage(p.text)
        claims = len(records)
        for row in expertqa_claims():
            texts = row["passages"]
            for text in texts:
                passage(text)
            claim(row["claim"], texts[:1], texts[1:])
            write("A", answer_check_values(texts, [(row["claim"], [1] if texts else [], False)]))
            claims += 1
        for row in attributionbench_rows():
            texts = [ref for ref in row["references"] if ref.strip()]
            for text in texts:
                passage(text)
            claim(row["claim"], texts[:1], texts[1:])
            claims += 1
        with open(DATASETS / "wice" / "entailment_retrieval_claim_dev.jsonl") as fh:
            for line in fh:
                row = json.loads(line)
                text = "\n".join(row["evidence"])
                passage(text)
                claim(row["claim"], [text], [])
                claims += 1
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    print(f"{claims} claims, sha256 {digest}")


if __name__ == "__main__":
    main(sys.argv[1])
