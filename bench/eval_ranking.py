"""Ranking quality of audit.matching.rank_sentences on human evidence labels (offline).

Run: .venv/bin/python bench/eval_ranking.py [--tune]

What the gold is (read this before quoting a figure):
- genSearch-min: AttributionBench rows from Stanford-GenSearch (Liu et al. 2023). Their
  `references` field is the annotator's copy-paste of the *minimal set of sentences* of the
  cited page that support the statement (one per line). Rows labelled attributable are
  complete support; "not attributable" rows with a short reference (<= 5 lines) are partial
  support, the reference being the supporting part. The cited pages themselves are not in the
  data, so each gold set is placed in a pseudo page of about 80 sentences (uniform 40-120)
  of real passages: "/easy" takes those of the same or most similar questions (question
  TF-IDF, never the claim); "/hard" those nearest to the gold text itself (same subject,
  closer to a real page). Gold lines go in as one block or scattered, half of items each.
  Gold = the sentences of those lines. Distractors may also support the claim, so scores are
  lower bounds; they are also easier than a real page, whose other sentences share its topic.
- expertqa-psg: ExpertQA claims judged "Complete" with one cited passage (~100 words); the
  page is that passage among the other passages retrieved for the same question (+ padding).
  Gold = every sentence of the cited passage: passage-level, not minimal, so only hit@3.
- hagrid-quote: AttributionBench HAGRID rows labelled attributable with one cited quote
  (a Wikipedia paragraph); page = all quotes of that question + padding. Passage-level gold.
Half of the questions (md5 of the question) tune the weights, the other half report.
Methods: bm25 = BM25 alone (k1 1.2, b 0.75, sentences as documents); rapidfuzz =
token_set_ratio alone; module = audit.matching.rank_sentences (BM25, places 4-5 by
neighbour-aware score, repeats shown once). --tune chooses by the one-standard-error rule.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import random
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _data import attributionbench_rows, expertqa_claims  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from audit import matching  # noqa: E402
from audit.bm25 import bm25_scores, pooled_idf  # noqa: E402


@dataclass(frozen=True)
class Item:
    dataset: str
    question: str
    claim: str
    page: str
    gold: frozenset[int]  # sentence indices of sentence_spans(page)
    minimal: bool

    @property
    def half(self) -> int:
        return hashlib.md5(self.question.encode()).digest()[0] % 2


# ---------------------------------------------------------------------------- pages


class Pool:
    """Real passages grouped by question, and question-to-question similarity."""

    def __init__(self, by_question: dict[str, list[str]]) -> None:
        self.questions = list(by_question)
        self.passages = by_question
        self.vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform(self.questions)
        self.all_passages = list(dict.fromkeys(p for ps in by_question.values() for p in ps))
        self.text_vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.text_matrix = self.text_vectorizer.fit_transform(self.all_passages)

    def neighbours(self, question: str) -> list[str]:
        sims = (self.matrix @ self.vectorizer.transform([question]).T).toarray().ravel()
        order = np.argsort(-sims, kind="stable")
        return [self.questions[i] for i in order if self.questions[i] != question]

    def similar_passages(self, text: str) -> list[str]:
        sims = (self.text_matrix @ self.text_vectorizer.transform([text]).T).toarray().ravel()
        order = np.argsort(-sims, kind="stable")[:200]
        return [self.all_passages[i] for i in order]


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.casefold()).strip()


def build_page(
    gold_blocks: list[str],
    question: str,
    pool: Pool,
    rng: random.Random,
    *,
    scattered: bool,
    hard: bool = False,
) -> tuple[str, frozenset[int]]:
    gold_norm = [_norm(b) for b in gold_blocks]
    target = rng.randint(40, 120)
    paragraphs: list[str] = []
    count = 0
    if hard:
        # Passages nearest to the gold text itself: same subject, like the rest of a page.
        groups = [pool.similar_passages(" ".join(gold_blocks))]
    else:
        groups = [pool.passages.get(q, []) for q in [question, *pool.neighbours(question)]]
    for group in groups:
        for passage in group:
            norm = _norm(passage)
            if any(g and (g in norm or norm in g) for g in gold_norm):
                continue
            if passage in paragraphs:
                continue
            paragraphs.append(passage)
            count += len(matching.sentence_spans(passage))
            if count >= target:
                break
        if count >= target:
            break
    rng.shuffle(paragraphs)
    if scattered:
        slots = sorted(rng.randint(0, len(paragraphs)) for _ in gold_blocks)
        for offset, (slot, block) in enumerate(zip(slots, gold_blocks, strict=True)):
            paragraphs.insert(slot + offset, ("GOLD", block))  # type: ignore[arg-type]
    else:
        paragraphs.insert(rng.randint(0, len(paragraphs)), ("GOLD", "\n".join(gold_blocks)))  # type: ignore[arg-type]
    text = ""
    gold_ranges: list[tuple[int, int]] = []
    for para in paragraphs:
        if text:
            text += "\n\n"
        if isinstance(para, tuple):
            gold_ranges.append((len(text), len(text) + len(para[1])))
            text += para[1]
        else:
            text += para
    spans = matching.sentence_spans(text)
    gold = frozenset(
        i for i, (s, e) in enumerate(spans) if any(gs <= s and e <= ge for gs, ge in gold_ranges)
    )
    return text, gold


def load_items() -> list[Item]:
    rng = random.Random(20261101)
    ab = attributionbench_rows()
    eqa = expertqa_claims()
    by_question: dict[str, list[str]] = {}
    for c in eqa:
        for p in c["passages"]:
            by_question.setdefault(c["question"], [])
            if p not in by_question[c["question"]]:
                by_question[c["question"]].append(p)
    for r in ab:
        for ref in r["references"]:
            if ref.strip() and ref not in by_question.setdefault(r["question"], []):
                by_question[r["question"]].append(ref)
    pool = Pool(by_question)
    items: list[Item] = []

    seen: set[tuple[str, str]] = set()
    for r in ab:
        if r["src_dataset"] != "Stanford-GenSearch" or not r["references"]:
            continue
        lines = [ln.strip() for ln in r["references"][0].split("\n") if ln.strip()]
        if not lines or len(lines) > 5 or len(" ".join(lines).split()) > 120:
            continue
        if (r["claim"], lines[0]) in seen:
            continue
        seen.add((r["claim"], lines[0]))
        label = "complete" if r["attribution_label"] == "attributable" else "partial"
        scattered = rng.random() < 0.5
        for hard in (False, True):
            page, gold = build_page(lines, r["question"], pool, rng, scattered=scattered, hard=hard)
            name = f"genSearch-min/{label}/{'hard' if hard else 'easy'}"
            if gold:
                items.append(Item(name, r["question"], r["claim"], page, gold, True))

    for c in eqa:
        if c["support"] != "Complete" or len(c["passages"]) != 1:
            continue
        if len(c["passages"][0].split()) < 30:
            continue
        page, gold = build_page(c["passages"], c["question"], pool, rng, scattered=False)
        if gold:
            items.append(Item("expertqa-psg", c["question"], c["claim"], page, gold, False))

    for r in ab:
        if r["src_dataset"] != "HAGRID" or r["attribution_label"] != "attributable":
            continue
        if len(r["references"]) != 1 or not r["references"][0].strip():
            continue
        quote = re.sub(r"^\[\d+\]\s*", "", r["references"][0].strip())
        page, gold = build_page([quote], r["question"], pool, rng, scattered=False)
        if gold:
            items.append(Item("hagrid-quote", r["question"], r["claim"], page, gold, False))
    return items


# ---------------------------------------------------------------------------- methods


@dataclass
class Components:
    """Per sentence of one page: the bounded score components of the combined ranker."""

    bm25: np.ndarray
    context: np.ndarray
    fuzz: np.ndarray
    sentences: tuple[str, ...]


def components(item: Item, k1: float, b: float) -> Components:
    passage = matching.prepare_passage(item.page)
    query = matching._query(item.claim)
    n = passage.index.size
    out = Components(*(np.zeros(n) for _ in range(3)), passage.sentences)
    if query.terms:
        idf = pooled_idf(query.terms, [passage.index])
        total = sum(idf.values())
        avgdl = sum(passage.index.lengths) / max(1, n)
        weights = [w / total for w in idf.values()]
        scores, masks = bm25_scores(idf, passage.index, avgdl, k1=k1, b=b)

        def weight(mask: int) -> float:
            return sum(w for bit, w in enumerate(weights) if mask >> bit & 1)

        for s, raw in scores.items():
            m = masks[s]
            out.bm25[s] = min(1.0, raw / total)
            out.context[s] = max(weight(m | masks.get(s - 1, 0)), weight(m | masks.get(s + 1, 0)))
    for s, sentence in enumerate(passage.sentences):
        out.fuzz[s] = fuzz.token_set_ratio(query.folded, sentence) / 100
    return out


def ranked(comp: Components, w: matching.RankWeights) -> list[int]:
    """The module's order, vectorised: best own scores first, then neighbour-aware ones."""
    lexical = w.bm25 * comp.bm25 + w.context * comp.context
    own = lexical.copy()
    if w.fuzz:
        # Only the best lexical candidates get the fuzzy score, as in the module.
        top = np.argsort(-lexical, kind="stable")[: w.fuzz_candidates]
        own[top] += w.fuzz * comp.fuzz[top]
    idx = np.flatnonzero(lexical > 0)
    head = _distinct(comp, idx[np.argsort(-own[idx], kind="stable")])
    if not w.neighbour:
        return head
    first = head[: w.head]
    previous = np.concatenate([[0.0], own[:-1]])
    following = np.concatenate([own[1:], [0.0]])
    joint = own + w.neighbour * np.maximum(previous, following)
    idx = np.flatnonzero(joint > 0)
    rest = [
        i for i in _distinct(comp, idx[np.argsort(-joint[idx], kind="stable")]) if i not in first
    ]
    return first + rest


def fuzz_only(comp: Components) -> list[int]:
    return _distinct(comp, np.argsort(-comp.fuzz, kind="stable"))


def _distinct(comp: Components, order: np.ndarray) -> list[int]:
    # A repeated sentence is shown once, as in the module.
    seen: set[str] = set()
    out = []
    for i in order:
        if comp.sentences[i] not in seen:
            seen.add(comp.sentences[i])
            out.append(int(i))
    return out


def metrics(items: list[Item], rankings: list[list[int]]) -> tuple[float, float | None, int]:
    hits = [bool(set(r[:3]) & it.gold) for it, r in zip(items, rankings, strict=True)]
    full = [
        it.gold <= set(r[:5])
        for it, r in zip(items, rankings, strict=True)
        if it.minimal and len(it.gold) <= 5
    ]
    return (
        sum(hits) / max(1, len(hits)),
        (sum(full) / len(full)) if full else None,
        len(items),
    )


BM25_ONLY = matching.RankWeights(bm25=1.0, context=0.0, fuzz=0.0, k1=1.2, b=0.75, neighbour=0.0)


def objective(items: list[Item], rankings: list[list[int]]) -> float:
    """Mean over datasets of hit@3 (+ full-set@5 where the gold is minimal)."""
    scores = []
    for name in sorted({it.dataset for it in items}):
        sub = [(it, r) for it, r in zip(items, rankings, strict=True) if it.dataset == name]
        h, f, _ = metrics([i for i, _ in sub], [r for _, r in sub])
        scores.append(h + (f if f is not None else 0.0))
    return statistics.mean(scores)


def _complexity(w: matching.RankWeights) -> tuple[int, float]:
    parts = sum(1 for x in (w.context, w.fuzz, w.neighbour) if x) + int((w.k1, w.b) != (1.2, 0.75))
    return parts, -w.bm25


def tune(items: list[Item]) -> tuple[matching.RankWeights, matching.RankWeights]:
    """Grid search on the tuning half, then the one-standard-error rule.

    The optimum is flat, so the simplest setting whose objective is within one bootstrap
    standard error of the best is chosen (fewest extra parts, then most BM25 weight),
    rather than the noisy argmax.
    """
    results: list[tuple[float, matching.RankWeights, list[list[int]]]] = []
    grid = [x / 10 for x in range(11)]
    for k1, b in itertools.product((0.9, 1.2, 1.5), (0.5, 0.75)):
        comps = [components(it, k1, b) for it in items]
        for wb, wx, nb in itertools.product(grid, grid[:6], (0.0, 0.5, 1.0)):
            wf = round(1.0 - wb - wx, 3)
            if wf < 0 or wf > 0.5:
                continue
            w = matching.RankWeights(bm25=wb, context=wx, fuzz=wf, k1=k1, b=b, neighbour=nb)
            rankings = [ranked(c, w) for c in comps]
            results.append((objective(items, rankings), w, rankings))
    results.sort(key=lambda r: -r[0])
    best_value, _, best_rankings = results[0]
    rng = random.Random(7)
    boot = []
    for _ in range(200):
        sample = [rng.randrange(len(items)) for _ in items]
        boot.append(objective([items[i] for i in sample], [best_rankings[i] for i in sample]))
    se = statistics.stdev(boot)
    eligible = [r for r in results if r[0] >= best_value - se]
    chosen = min(eligible, key=lambda r: _complexity(r[1]))
    for value, w, _ in results[:5]:
        print(f"  {value:.4f}  {w}")
    print(f"best {best_value:.4f}, bootstrap SE {se:.4f}; {len(eligible)} settings within 1 SE")
    print(f"chosen (simplest within 1 SE): {chosen[0]:.4f}  {chosen[1]}")
    return chosen[1], results[0][1]


def report(items: list[Item], extra: dict[str, matching.RankWeights], title: str) -> None:
    print(f"\n{title}")
    print(
        f"{'dataset':30} {'n':>4} {'sent/page':>9} {'gold':>5}  "
        f"{'method':10} {'hit@3':>6} {'full@5':>7}"
    )
    groups: dict[str, list[Item]] = {}
    for it in sorted(items, key=lambda it: it.dataset):
        groups.setdefault(it.dataset, []).append(it)
    # Pooled rows: every minimal-set item, and those whose gold has several sentences,
    # where the whole set is the hard part.
    groups["genSearch-min/ALL"] = [it for it in items if it.minimal]
    groups["genSearch-min/ALL, gold>=2 sent."] = [
        it for it in items if len(it.gold) >= 2 and it.minimal
    ]
    for name, sub in groups.items():
        pages = statistics.median(len(matching.sentence_spans(it.page)) for it in sub)
        gold = statistics.median(len(it.gold) for it in sub)
        comps = [components(it, BM25_ONLY.k1, BM25_ONLY.b) for it in sub]
        module = [
            _sentence_indices(it, matching.rank_sentences(it.claim, [it.page], k=5)) for it in sub
        ]
        rows = [
            ("bm25", [ranked(c, BM25_ONLY) for c in comps]),
            ("rapidfuzz", [fuzz_only(c) for c in comps]),
            ("module", module),
        ]
        for label, w in extra.items():
            rows.append((label, [ranked(components(it, w.k1, w.b), w) for it in sub]))
        for method, rankings in rows:
            h, f, n = metrics(sub, rankings)
            fs = f"{f:7.3f}" if f is not None else "      -"
            print(f"{name:30} {n:4d} {pages:9.0f} {gold:5.0f}  {method:10} {h:6.3f} {fs}")


def _sentence_indices(item: Item, highlights: list[matching.Highlight]) -> list[int]:
    starts = {s: i for i, (s, _) in enumerate(matching.sentence_spans(item.page))}
    return [starts[h.start] for h in highlights]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tune", action="store_true", help="grid-search weights on half 0")
    args = parser.parse_args()
    items = load_items()
    tune_half = [it for it in items if it.half == 0]
    test_half = [it for it in items if it.half == 1]
    extra: dict[str, matching.RankWeights] = {}
    if args.tune:
        chosen, argmax = tune(tune_half)
        extra = {"1se-pick": chosen, "argmax": argmax}
    else:
        # The module's setting re-run through the vectorised ranker: must equal "module".
        extra = {"check": matching.DEFAULT_WEIGHTS}
    report(tune_half, extra, "TUNING half (weights chosen here)")
    report(test_half, extra, "HELD-OUT half (report these)")


if __name__ == "__main__":
    main()
