"""The records every import format produces, and the one error they raise.

Plain dataclasses so the Django import service and the tests share one vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from audit.formats.labelled import Answer as LabelledAnswer

# The database's column limits for imported names (Question.external_id, Answer.external_id,
# Answer.system, Rater.name, RaterLabel.raw_label): a longer value is refused with its place
# in the file, never cut, since two ids cut to one prefix would become one answer.
MAX_ID = 200
MAX_SYSTEM = 200
MAX_RATER = 200
MAX_RAW_LABEL = 100


@dataclass(frozen=True)
class PassageRecord:
    title: str
    url: str
    text: str


@dataclass(frozen=True)
class LabelRecord:
    """One rater's judgment of one claim, as found in the imported file."""

    rater: str
    # 0-based index into AnswerRecord.claims when the format gives claims, else into the
    # claims the splitter will make from the answer.
    claim_index: int
    # One of audit.judgments.JUDGMENT_CODES, or None when the source label maps to nothing.
    judgment: str | None
    raw_label: str
    verification_worthy: bool | None = None
    note: str = ""
    # The rater's kind, a code of audit.judgments.RATER_KINDS; None when the file does not
    # say (a new rater is then human).
    kind: str | None = None


@dataclass(frozen=True)
class AnswerRecord:
    """One system's answer to one question, with the passages its citations point to."""

    location: str  # "line 3" (JSON Lines) or "data[2]" (JSON)
    question_id: str
    question: str
    answer_id: str  # "" when the format has no answer id
    system: str
    answer: str
    passages: tuple[PassageRecord, ...]  # citation [n] refers to passages[n - 1]
    claims: tuple[str, ...] | None  # None: the answer still has to be split into claims
    labels: tuple[LabelRecord, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    # A citeaudit export carries the review itself: claims with their offsets, checks,
    # sheets and gold are restored from it instead of splitting and matching again.
    labelled: LabelledAnswer | None = None


@dataclass(frozen=True)
class ParsedFile:
    format: str  # "native" | "alce" | "ragas" | "expertqa" | "citeaudit"
    # A tuple from parse_file; from parse_path, a native JSON Lines file's records come
    # as a one-pass iterator that parses each line as it is reached.
    records: tuple[AnswerRecord, ...] | Iterator[AnswerRecord]


@dataclass
class Budget:
    """How many answers and claims one import may bring; None leaves it unbounded.

    Counted by the parsers as they read, so a file over the bound is refused before the
    rest of it is parsed and before anything is written.
    """

    filename: str
    max_answers: int | None = None
    max_claims: int | None = None
    # What to do instead, appended to the refusal (the web page points to the command).
    advice: str = ""
    # What is counted as answers: a verdict file counts verdicts.
    unit: str = "answers"
    answers: int = 0
    claims: int = 0

    def take(self, record: AnswerRecord) -> AnswerRecord:
        """Count an answer and its given claims; returns it, for records.append()."""
        self.add_answer(record.location)
        self.add_claims(len(record.claims or ()), record.location)
        return record

    def add_answer(self, location: str) -> None:
        self.answers += 1
        if self.max_answers is not None and self.answers > self.max_answers:
            raise self._over(location, f"{self.max_answers:,} {self.unit}")

    def add_claims(self, count: int, location: str) -> None:
        self.claims += count
        if self.max_claims is not None and self.claims > self.max_claims:
            raise self._over(location, f"{self.max_claims:,} claims")

    def _over(self, location: str, what: str) -> FormatError:
        message = f"the file holds more than {what}, the most one import here may bring"
        return FormatError(self.filename, location, "", f"{message}{self.advice}")


class FormatError(ValueError):
    """A file that cannot be imported, with the place that says why.

    str(err) reads "answers.jsonl: line 17: passages[2].text: expected a string, got null".
    Empty parts are left out. A JSON path location continues into the field
    ("answers.json: data[3].docs: expected a list, got object").
    """

    def __init__(self, filename: str, location: str, field: str, message: str) -> None:
        self.filename = filename
        self.location = location
        self.field = field
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        place = self.location
        if self.field:
            if not place:
                place = self.field
            elif place.startswith("line "):
                place = f"{place}: {self.field}"
            elif self.field.startswith("["):
                place = f"{place}{self.field}"
            else:
                place = f"{place}.{self.field}"
        return ": ".join(part for part in (self.filename, place, self.message) if part)

    def __reduce__(self) -> tuple[type[FormatError], tuple[str, str, str, str]]:
        # Keeps the error picklable (e.g. across a task queue) despite the custom __init__.
        return (type(self), (self.filename, self.location, self.field, self.message))
