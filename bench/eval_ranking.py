"""Ranking quality of audit.matching.rank_sentences on human evidence labels (offline).

Run: .venv/bin/python bench/eval_ranking.py [--ablate] [--wice]

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
- genSearch-min/.../web: the "/hard" page dressed as a scraped web page (its own random
  stream, so the other pages stay as they were): menu lines, a title, a cookie notice,
  title-case section headings made from the next paragraph's first words (before ~1/3 of
  paragraphs, the gold one included), a repeated pull quote, a "Related articles" list of
  neighbouring questions (short same-topic lines) and a footer. Pooled as "web ALL".
- expertqa-psg: ExpertQA claims judged "Complete" with one cited passage (~100 words); the
  page is that passage among the other passages retrieved for the same question (+ padding).
  Gold = every sentence of the cited passage: passage-level, not minimal, so only hit@3.
- hagrid-quote: AttributionBench HAGRID rows labelled attributable with one cited quote
  (a Wikipedia paragraph); page = all quotes of that question + padding. Passage-level gold.
Half of the questions (md5 of the question) chose the weights (audit.matching.RankWeights),
the other half reports. Methods: bm25 = BM25 alone (k1 1.2, b 0.75, sentences as documents,
the module's analyzer); rapidfuzz = token_set_ratio alone; module =
audit.matching.rank_sentences. --ablate adds the module with one part changed at a time.

--wice: real cited web pages instead (WiCE, Kamoi et al. 2023, ../shared/datasets/wice):
Wikipedia claims with the sentences of the page they cite (menus, headings, dates, cookie
and share lines included) and the human alternative minimal evidence sets. The page goes in
as one passage, its lines joined by newlines, as a cited page is stored; a highlight counts
for the line it starts in ("lines": each line as a passage of its own, in case a caller
passes pages that way). hit@3 = a sentence of any minimal set among the lines of the top
3; full@5 = one whole minimal set among the lines of the top 5; claims without a minimal
set (not supported) are left out. train = WiCE's non-supported-tokens train split (374
partially supported sub-claims, minimal sets of their supported part; other pages than
dev's): the weights were chosen there. dev = the entailment-retrieval dev split (319 claims
with a set): report only until 2026-12-02; the later places' date and chrome weights
(2026-12-03) were chosen on train + dev, and --wice-cv gives the cross-validated estimate
of that choice (5 folds of dev, the weights searched on train + the other folds). The
test split is held out elsewhere. "previous" is the ranker's weights before they were
chosen on WiCE (RankWeights of MATCHER_VERSION 2026.11-2).
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import random
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _data import attributionbench_rows, expertqa_claims  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from audit import matching  # noqa: E402
from audit.bm25 import STOP_WORDS, bm25_scores, pooled_idf  # noqa: E402


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


# Lines every scraped web page carries around its text.
_NAV = ["Home", "News", "Topics", "About us", "Contact", "Subscribe", "Sign in", "Menu", "Search"]
_COOKIE = (
    "We use cookies to give you the best experience on our website. By continuing to "
    "browse the site you agree to our use of cookies."
)
_FOOTER = ["Share this article", "Advertisement", "Privacy policy", "Terms of use"]
_HEADING_WORD = re.compile(r"[A-Za-z][\w'-]*")


def _heading(text: str, rng: random.Random) -> str:
    """A short title-case line from the first content words of text (a section heading)."""
    words = [w for w in _HEADING_WORD.findall(text) if w.lower() not in STOP_WORDS]
    return " ".join(words[: rng.randint(2, 5)]).title()


def _web_page(
    paragraphs: list[str | tuple[str, str]], question: str, pool: Pool, rng: random.Random
) -> list[str | tuple[str, str]]:
    """Dress paragraphs as a scraped page: menu, title, cookie notice, section headings,
    a repeated pull quote, a list of related (same-topic) titles and a footer.

    Headings and list items are short lines sharing the page's subject words, the traps
    a real page sets for a ranker that BM25's length normalisation favours.
    """
    body: list[str | tuple[str, str]] = []
    for para in paragraphs:
        if rng.random() < 0.35:
            body.append(_heading(para[1] if isinstance(para, tuple) else para, rng))
        body.append(para)
    plain = [p for p in paragraphs if isinstance(p, str)]
    if plain:
        spans = matching.sentence_spans(rng.choice(plain))
        if spans:
            # A pull quote: a sentence of the page shown twice.
            source = rng.choice(plain)
            start, end = rng.choice(matching.sentence_spans(source) or spans)
            body.insert(rng.randint(0, len(body)), source[start:end])
    related = pool.neighbours(question)[:5]
    return [
        "\n".join(rng.sample(_NAV, rng.randint(3, 6))),
        _heading(question, rng) if rng.random() < 0.5 else question.rstrip("?"),
        _COOKIE,
        *body,
        "Related articles\n" + "\n".join(f"- {q}" for q in related),
        "\n".join(_FOOTER),
    ]


def build_page(
    gold_blocks: list[str],
    question: str,
    pool: Pool,
    rng: random.Random,
    *,
    scattered: bool,
    hard: bool = False,
    web: bool = False,
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
    if web:
        paragraphs = _web_page(paragraphs, question, pool, rng)  # type: ignore[arg-type]
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
        # Its own random stream, so adding this variant left every other page as it was.
        web_rng = random.Random(r["id"])
        page, gold = build_page(
            lines,
            r["question"],
            pool,
            web_rng,
            scattered=web_rng.random() < 0.5,
            hard=True,
            web=True,
        )
        if gold:
            items.append(
                Item(f"genSearch-min/{label}/web", r["question"], r["claim"], page, gold, True)
            )

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
    """Per sentence of one page: the scores of the two baselines."""

    bm25: np.ndarray
    fuzz: np.ndarray
    sentences: tuple[str, ...]


def components(item: Item, k1: float = 1.2, b: float = 0.75) -> Components:
    passage = matching.prepare_passage(item.page)
    query = matching._query(item.claim)
    n = passage.index.size
    out = Components(np.zeros(n), np.zeros(n), passage.sentences)
    if query.terms:
        idf = pooled_idf(query.terms, [passage.index])
        avgdl = sum(passage.index.lengths) / max(1, n)
        scores, _ = bm25_scores(idf, passage.index, avgdl, k1=k1, b=b)
        for s, raw in scores.items():
            out.bm25[s] = raw
    for s, sentence in enumerate(passage.sentences):
        out.fuzz[s] = fuzz.token_set_ratio(query.folded, sentence) / 100
    return out


def bm25_only(comp: Components) -> list[int]:
    """Plain BM25 (the module's analyzer), sentences as documents, repeats shown once."""
    idx = np.flatnonzero(comp.bm25 > 0)
    return _distinct(comp, idx[np.argsort(-comp.bm25[idx], kind="stable")])


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


def module(items: list[Item], weights: matching.RankWeights | None = None) -> list[list[int]]:
    """The module's ranking (rank_sentences, or its internals with other weights), k=5."""
    out = []
    for it in items:
        prepared = matching.prepare_passage(it.page)
        if weights is None:
            highlights = matching.rank_sentences(it.claim, [prepared], k=5)
        else:
            highlights = matching._rank(it.claim, [prepared], 5, weights)
        starts = {s: i for i, (s, _) in enumerate(prepared.spans)}
        out.append([starts[h.start] for h in highlights])
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


_DEFAULT = matching.DEFAULT_WEIGHTS
ABLATIONS = {
    "no-set": replace(_DEFAULT, gain=0.0, adjacency=0.0, neighbour=0.0),
    "nbr-only": replace(_DEFAULT, gain=0.0, adjacency=0.0),
    "+coverage": replace(_DEFAULT, bm25=0.5, coverage=0.5),
    "+fuzz.2": replace(_DEFAULT, bm25=0.8, fuzz=0.2),
}


def report(items: list[Item], extra: dict[str, matching.RankWeights], title: str) -> None:
    print(f"\n{title}")
    print(
        f"{'dataset':34} {'n':>4} {'sent/page':>9} {'gold':>5}  "
        f"{'method':10} {'hit@3':>6} {'full@5':>7}"
    )
    groups: dict[str, list[Item]] = {}
    for it in sorted(items, key=lambda it: it.dataset):
        groups.setdefault(it.dataset, []).append(it)
    # Pooled rows: every minimal-set item, and those whose gold has several sentences,
    # where the whole set is the hard part. The web variant is pooled on its own, so the
    # older rows keep their meaning.
    old = [it for it in items if it.minimal and not it.dataset.endswith("/web")]
    web = [it for it in items if it.dataset.endswith("/web")]
    groups["genSearch-min/ALL"] = old
    groups["genSearch-min/ALL, gold>=2 sent."] = [it for it in old if len(it.gold) >= 2]
    groups["genSearch-min/web ALL"] = web
    groups["genSearch-min/web, gold>=2 sent."] = [it for it in web if len(it.gold) >= 2]
    for name, sub in groups.items():
        pages = statistics.median(len(matching.sentence_spans(it.page)) for it in sub)
        gold = statistics.median(len(it.gold) for it in sub)
        comps = [components(it) for it in sub]
        rows = [
            ("bm25", [bm25_only(c) for c in comps]),
            ("rapidfuzz", [fuzz_only(c) for c in comps]),
            ("module", module(sub)),
        ]
        rows.extend((label, module(sub, w)) for label, w in extra.items())
        for method, rankings in rows:
            h, f, n = metrics(sub, rankings)
            fs = f"{f:7.3f}" if f is not None else "      -"
            print(f"{name:34} {n:4d} {pages:9.0f} {gold:5.0f}  {method:10} {h:6.3f} {fs}")


# ---------------------------------------------------------------------------- WiCE

WICE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "wice"
WICE_SPLITS = {
    "train": "non_supported_tokens_train.jsonl",
    "dev": "entailment_retrieval_claim_dev.jsonl",
}
# The weights of MATCHER_VERSION 2026.11-2, chosen on the pseudo pages above.
PREVIOUS = replace(
    _DEFAULT,
    bm25=1.0,
    coverage=0.0,
    k1=1.2,
    b=0.75,
    gain=0.5,
    adjacency=0.1,
    neighbour=0.5,
    date=0.0,
    chrome=0.0,
)


@dataclass(frozen=True)
class WiceItem:
    claim: str
    lines: tuple[str, ...]
    sets: tuple[frozenset[int], ...]  # alternative minimal evidence sets, line indices


def load_wice(split: str) -> list[WiceItem]:
    items = []
    with open(WICE / WICE_SPLITS[split]) as fh:
        for line in fh:
            row = json.loads(line)
            sets = tuple(frozenset(s) for s in row["supporting_sentences"] if s)
            if sets:
                items.append(WiceItem(row["claim"], tuple(row["evidence"]), sets))
    return items


def wice_lines(item: WiceItem, weights: matching.RankWeights | None, *, as_lines: bool) -> list:
    """The lines of the top 5 highlights, in rank order (a line may come twice)."""
    if weights is None:
        # Plain BM25 (the module's analyzer), as in bm25_only above.
        page = "\n".join(item.lines)
        prepared = matching.prepare_passage(page)
        comp = components(Item("wice", "", item.claim, page, frozenset(), True))
        starts = _line_starts(item.lines)
        return [bisect.bisect_right(starts, prepared.spans[i][0]) - 1 for i in bm25_only(comp)[:5]]
    if as_lines:
        return [h.passage for h in matching._rank(item.claim, list(item.lines), 5, weights)]
    highlights = matching._rank(item.claim, ["\n".join(item.lines)], 5, weights)
    starts = _line_starts(item.lines)
    return [bisect.bisect_right(starts, h.start) - 1 for h in highlights]


def _line_starts(lines: Sequence[str]) -> list[int]:
    starts, at = [], 0
    for text in lines:
        starts.append(at)
        at += len(text) + 1
    return starts


def wice_report() -> None:
    methods: list[tuple[str, matching.RankWeights | None, bool]] = [
        ("bm25", None, False),
        ("previous", PREVIOUS, False),
        ("module", _DEFAULT, False),
        ("previous, lines", PREVIOUS, True),
        ("module, lines", _DEFAULT, True),
    ]
    print(f"{'split':6} {'n':>4}  {'method':16} {'hit@3':>6} {'full@5':>7}")
    for split in WICE_SPLITS:
        items = load_wice(split)
        for name, weights, as_lines in methods:
            hits = full = 0
            for item in items:
                got = wice_lines(item, weights, as_lines=as_lines)
                gold = frozenset().union(*item.sets)
                hits += bool(gold & set(got[:3]))
                full += any(s <= set(got[:5]) for s in item.sets)
            n = len(items)
            print(f"{split:6} {n:4d}  {name:16} {hits / n:6.3f} {full / n:7.3f}")


# ---------------------------------------------------------------------------- WiCE, CV

# The set step's weights searched by --wice-cv, each over these values (the own score's
# BM25 parameters were searched too, on a grid of b, k1 and coverage: flat, kept as they
# are). Two searches: all four weights, and only the two new ones (what shipped).
CV_GRIDS = {
    "gain, adjacency, date, chrome": {
        "gain": (0.5, 0.75, 1.0, 1.5),
        "adjacency": (0.0, 0.03, 0.05, 0.1),
        "date": (0.0, 0.05, 0.1, 0.2),
        "chrome": (0.0, 0.1, 0.2),
    },
    "date, chrome": {"date": (0.0, 0.05, 0.1, 0.2), "chrome": (0.0, 0.1, 0.2)},
}
CV_FOLDS = 5
# Where each search starts: the set step of MATCHER_VERSION 2026.12-1, before any of its
# weights were chosen on dev (starting from the shipped weights would favour them).
CV_START = replace(_DEFAULT, gain=1.0, adjacency=0.05, date=0.0, chrome=0.0)


def _wice_prepared(items: list[WiceItem]) -> list[tuple]:
    """Each item's page prepared and scored once: the set step's weights do not change the
    own scores, so a weight search only reruns _select."""
    out = []
    for item in items:
        prepared = [matching.prepare_passage("\n".join(item.lines))]
        ranking = matching._score_sentences(matching._query(item.claim), prepared, _DEFAULT)
        out.append((item, prepared, ranking, _line_starts(item.lines)))
    return out


def _wice_score(prepared_items: list[tuple], weights: matching.RankWeights) -> tuple[float, float]:
    hits = full = 0
    for item, prepared, ranking, starts in prepared_items:
        chosen = matching._select(ranking, prepared, 5, weights)
        got = [bisect.bisect_right(starts, prepared[0].spans[i.sentence][0]) - 1 for i in chosen]
        hits += bool(frozenset().union(*item.sets) & set(got[:3]))
        full += any(s <= set(got) for s in item.sets)
    n = max(1, len(prepared_items))
    return hits / n, full / n


def _ascend(prepared_items: list[tuple], grid: dict) -> matching.RankWeights:
    """Coordinate ascent on whole-set@5 over grid from CV_START, two passes."""
    weights = CV_START
    best = _wice_score(prepared_items, weights)[1]
    for _ in range(2):
        changed = False
        for name, values in grid.items():
            for value in values:
                trial = replace(weights, **{name: value})
                score = _wice_score(prepared_items, trial)[1]
                if score > best + 1e-9:
                    best, weights, changed = score, trial, True
        if not changed:
            break
    return weights


def wice_cv() -> None:
    """Cross-validated estimate of choosing the set step's weights on train + dev.

    Dev's claims each cite their own page, so folds of claims are folds of pages. Each
    fold's weights are searched on train and the other four folds; the fold reports.
    """
    train = _wice_prepared(load_wice("train"))
    dev = _wice_prepared(load_wice("dev"))
    order = list(range(len(dev)))
    random.Random(7).shuffle(order)
    folds = [order[i::CV_FOLDS] for i in range(CV_FOLDS)]
    for title, grid in CV_GRIDS.items():
        print(f"searching {title}")
        hits = full = 0.0
        for fold in folds:
            held = set(fold)
            weights = _ascend(train + [dev[i] for i in order if i not in held], grid)
            h, f = _wice_score([dev[i] for i in fold], weights)
            hits, full = hits + h * len(fold), full + f * len(fold)
            chosen = {n: getattr(weights, n) for n in grid}
            print(f"  fold of {len(fold)}: {chosen} hit@3 {h:.3f} full@5 {f:.3f}")
        print(f"  dev, cross-validated: hit@3 {hits / len(dev):.3f} full@5 {full / len(dev):.3f}")
        weights = _ascend(train + dev, grid)
        print("  chosen on train + dev:", {n: getattr(weights, n) for n in grid})
    for name, items in (("train", train), ("dev", dev)):
        for label, w in (("start", CV_START), ("shipped", _DEFAULT)):
            h, f = _wice_score(items, w)
            print(f"{name:5} {label:8} hit@3 {h:.3f} full@5 {f:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--ablate", action="store_true", help="also rank with each part of the module off"
    )
    parser.add_argument("--wice", action="store_true", help="real cited web pages (WiCE) only")
    parser.add_argument(
        "--wice-cv",
        action="store_true",
        help="cross-validate the choice of the set step's weights on WiCE train + dev",
    )
    args = parser.parse_args()
    if args.wice_cv:
        wice_cv()
        return
    if args.wice:
        wice_report()
        return
    items = load_items()
    tune_half = [it for it in items if it.half == 0]
    test_half = [it for it in items if it.half == 1]
    extra = ABLATIONS if args.ablate else {}
    report(tune_half, extra, "TUNING half (weights chosen here)")
    report(test_half, extra, "HELD-OUT half (report these)")


if __name__ == "__main__":
    main()
