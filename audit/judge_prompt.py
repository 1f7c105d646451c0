"""An automatic judge's prompt and reply: the default template, the prompt for one claim, and
the check every reply must pass before it becomes a verdict (never guessed, never repaired).

Plain Python: the judge service renders and checks with it; tests call it without a database.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from string import Template

from audit.judgments import (
    JUDGMENT_CODES,
    JUDGMENTS,
    MAX_ASSERTIONS,
    MAX_EVIDENCE,
    judgment_problems,
)
from audit.sentences import sentence_spans

MAX_RATIONALE = 2000
CLAIM_OPEN = "⟦"
CLAIM_CLOSE = "⟧"

REPLY_FORMAT = """\
Reply with one JSON object and nothing else:
{
  "judgment": one of $judgment_codes,
  "evidence": [numbers of the sentences above that support the claim],
  "unsupported_spans": [exact words of the claim that no sentence supports],
  "wrong_citation_passage": the number of an uncited passage that supports the claim, or null,
  "answers_question": true if the claim states what the question asks, else false,
  "rationale": "one or two sentences"
}
"supported" and "partially_supported" need at least one evidence sentence;
"wrong_citation" needs wrong_citation_passage."""

DEFAULT_TEMPLATE = """\
You check whether the passages an answer cites support one claim of that answer.
Follow the guidelines the human reviewers follow.

## Guidelines
$guidelines

## Question
$question

## Answer (the claim to judge is marked ⟦like this⟧)
$answer

## Claim
$claim

## Passages, split into numbered sentences
$passages

## Judgments
$judgments

$reply_format
"""

# What a template may use; any other $name is left as written.
PLACEHOLDERS = (
    "guidelines",
    "question",
    "answer",
    "claim",
    "passages",
    "judgments",
    "reply_format",
)


@dataclass(frozen=True)
class PassageText:
    position: int  # the number citations use, 1-based
    title: str
    text: str
    cited: bool  # cited by the claim being judged


@dataclass(frozen=True)
class Sentence:
    number: int  # 1-based across the passages, as the prompt shows it
    passage: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ClaimPrompt:
    """Everything a judge is shown about one claim."""

    guidelines: str
    question: str
    answer: str
    claim: str
    claim_start: int
    claim_end: int
    passages: tuple[PassageText, ...]


@dataclass(frozen=True)
class JudgeReply:
    """A reply that passed `check_reply`: evidence as passage spans, spans as claim offsets."""

    judgment: str
    evidence: tuple[Sentence, ...]
    unsupported_spans: tuple[dict, ...]  # {"text", "start", "end"} in the claim
    wrong_citation_passage: int | None
    rationale: str
    # Whether the claim states what the question asks; None where the reply did not say
    # (templates written before it was asked for).
    answers_question: bool | None = None


class ReplyError(ValueError):
    """A reply that is not a verdict; the message says why, for the lead."""


def numbered_sentences(passages: tuple[PassageText, ...]) -> tuple[Sentence, ...]:
    sentences = []
    for passage in passages:
        for start, end in sentence_spans(passage.text):
            sentences.append(
                Sentence(
                    number=len(sentences) + 1,
                    passage=passage.position,
                    start=start,
                    end=end,
                    text=passage.text[start:end],
                )
            )
    return tuple(sentences)


def render_prompt(template: str, claim: ClaimPrompt) -> str:
    """The template with the claim's parts filled in; unknown `$names` stay as written."""
    sentences = numbered_sentences(claim.passages)
    lines = []
    for passage in claim.passages:
        cited = "cited by the claim" if passage.cited else "not cited by the claim"
        lines.append(f"[{passage.position}] {passage.title or 'Untitled'} ({cited})")
        lines.extend(f"  S{s.number}: {s.text}" for s in sentences if s.passage == passage.position)
    marked = (
        claim.answer[: claim.claim_start]
        + CLAIM_OPEN
        + claim.answer[claim.claim_start : claim.claim_end]
        + CLAIM_CLOSE
        + claim.answer[claim.claim_end :]
    )
    codes = ", ".join(f'"{code}"' for code, _ in JUDGMENTS)
    values = {
        "guidelines": claim.guidelines.strip() or "(none written)",
        "question": claim.question,
        "answer": marked,
        "claim": claim.claim,
        "passages": "\n".join(lines) or "(no passages)",
        "judgments": "\n".join(f"- {code}: {label}" for code, label in JUDGMENTS),
        "reply_format": Template(REPLY_FORMAT).substitute(judgment_codes=codes),
    }
    return Template(template).safe_substitute(values)


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


def check_reply(content: str | None, claim: ClaimPrompt) -> JudgeReply:
    """The verdict a reply states, or ReplyError naming the first thing wrong with it.

    A reply wrapped in one ```json fence is read inside it; nothing else is repaired.
    """
    text = (content or "").strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except ValueError:
        raise ReplyError(f"The reply is not JSON: {_clip(content or '')!r}.") from None
    if not isinstance(data, dict):
        raise ReplyError("The reply is JSON but not an object.")

    judgment = data.get("judgment")
    if judgment not in JUDGMENT_CODES:
        raise ReplyError(
            f"judgment {_clip(str(judgment))!r} is not one of {', '.join(sorted(JUDGMENT_CODES))}."
        )

    sentences = numbered_sentences(claim.passages)
    numbers = data.get("evidence", [])
    if not isinstance(numbers, list) or len(numbers) > MAX_EVIDENCE:
        raise ReplyError("evidence is not a list of sentence numbers.")
    evidence = []
    for number in numbers:
        if not isinstance(number, int) or isinstance(number, bool):
            raise ReplyError(f"evidence {_clip(repr(number))} is not a sentence number.")
        if not 1 <= number <= len(sentences):
            raise ReplyError(
                f"evidence sentence {number} is out of range: the passages have "
                f"{len(sentences)} sentence{'s' if len(sentences) != 1 else ''}."
            )
        if sentences[number - 1] not in evidence:
            evidence.append(sentences[number - 1])

    spans = data.get("unsupported_spans", [])
    if not isinstance(spans, list) or len(spans) > MAX_ASSERTIONS:
        raise ReplyError("unsupported_spans is not a list of words of the claim.")
    found = []
    for span in spans:
        if not isinstance(span, str) or not span.strip():
            raise ReplyError(f"unsupported span {_clip(repr(span))} is not text.")
        start = claim.claim.find(span.strip())
        if start < 0:
            raise ReplyError(f"unsupported span {_clip(span)!r} is not in the claim.")
        found.append({"text": span.strip(), "start": start, "end": start + len(span.strip())})

    passage = data.get("wrong_citation_passage")
    positions = {p.position for p in claim.passages}
    if passage is not None and (
        not isinstance(passage, int) or isinstance(passage, bool) or passage not in positions
    ):
        raise ReplyError(
            f"wrong_citation_passage {_clip(repr(passage))} is not a passage of the answer."
        )
    problems = judgment_problems(
        judgment=judgment,
        evidence=[{"passage": s.passage} for s in evidence],
        wrong_citation_passage=passage,
        cited=[p.position for p in claim.passages if p.cited],
    )
    if problems:
        raise ReplyError(problems[0])

    rationale = data.get("rationale", "")
    if not isinstance(rationale, str):
        raise ReplyError("rationale is not text.")
    answers = data.get("answers_question")
    if answers is not None and not isinstance(answers, bool):
        raise ReplyError(f"answers_question {_clip(repr(answers))} is not true or false.")
    return JudgeReply(
        judgment=judgment,
        evidence=tuple(evidence),
        unsupported_spans=tuple(found),
        wrong_citation_passage=passage,
        rationale=rationale.strip()[:MAX_RATIONALE],
        answers_question=answers,
    )


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
