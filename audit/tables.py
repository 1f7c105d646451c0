"""django-tables2 tables for the list pages."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django_tables2.paginators import LazyPaginator

from audit import judgments, selectors
from audit.answer_flags import NO_CITATION_VERIFIES
from audit.models import Answer, AuditSet, Claim, Severity

type Rows = list[tuple[str, list[tuple[str, str]]]]


class LastPageLazyPaginator(LazyPaginator):
    """LazyPaginator (page N reads its rows and one more, never a COUNT) that also serves
    `page=last`, counting the rows only then: the last page is one click away (the table's
    "last" link) and costs one COUNT."""

    serves_last = True

    def validate_number(self, number):
        if number == "last":
            number = max(1, math.ceil(len(self.object_list) / self.per_page))
        return super().validate_number(number)


def one_pass_rows(table: tables.Table, cells: Callable[[Any], list[str]]) -> Rows:
    """A page's rows as (row class, [(td attributes, cell)]), for _one_pass_table.html.

    django-tables2 renders every cell through a signature-inspecting call: about 100 ms for
    a page of 50 claims × 8 columns, 40 ms for 50 answers × 7. The tables whose columns are
    fixed give `cells(record)`, calling their render methods directly, and get the
    library's own markup (tests compare the two).
    """
    attrs = [table.columns[name].attrs["td"].as_html() for name in table.Meta.fields]
    return [
        ("even" if index % 2 == 0 else "odd", list(zip(attrs, cells(row.record), strict=True)))
        for index, row in enumerate(table.paginated_rows)
    ]


class AuditSetTable(tables.Table):
    name = tables.Column(linkify=True)
    workspace = tables.Column("Workspace", accessor="workspace__name", order_by="workspace__name")
    answer_count = tables.Column("Answers", attrs={"td": {"class": "num"}})
    claim_count = tables.Column("Claims", attrs={"td": {"class": "num"}})
    uncited_count = tables.Column("Uncited", attrs={"td": {"class": "num"}})
    unknown_count = tables.Column("Cited-unknown", attrs={"td": {"class": "num"}})
    created_at = tables.DateTimeColumn(format="Y-m-d H:i", verbose_name="Created")

    class Meta:
        model = AuditSet
        fields = [
            "name",
            "workspace",
            "answer_count",
            "claim_count",
            "uncited_count",
            "unknown_count",
            "created_at",
        ]
        order_by = "-created_at"
        attrs = {"class": "table"}
        empty_text = "No sets here: none matches the filters, or none is shared with you yet."


class AnswerTable(tables.Table):
    external_id = tables.Column("Answer", empty_values=())
    question = tables.Column(
        "Question", accessor="question__text", order_by="question__external_id"
    )
    system = tables.Column()
    claim_count = tables.Column("Claims", attrs={"td": {"class": "num"}})
    verified_count = tables.Column("All words found", attrs={"td": {"class": "num"}})
    uncited_count = tables.Column("Uncited", attrs={"td": {"class": "num"}})
    unknown_count = tables.Column("Cited-unknown", attrs={"td": {"class": "num"}})

    class Meta:
        model = Answer
        fields = [
            "external_id",
            "question",
            "system",
            "claim_count",
            "verified_count",
            "uncited_count",
            "unknown_count",
        ]
        attrs = {"class": "table"}
        template_name = "audit/_one_pass_table.html"

    @property
    def page_rows(self) -> Rows:
        question, system = self.columns["question"], self.columns["system"]

        def cells(record: Answer) -> list[str]:
            text = record.question.text
            return [
                self.render_external_id(record),
                question.default
                if text in question.column.empty_values
                else self.render_question(text),
                system.default if record.system in system.column.empty_values else record.system,
                str(record.claim_count),
                str(record.verified_count),
                str(record.uncited_count),
                str(record.unknown_count),
            ]

        return one_pass_rows(self, cells)

    def render_external_id(self, record: Answer) -> str:
        link = format_html(
            '<a href="{}">{}</a>', record.get_absolute_url(), record.external_id or f"#{record.pk}"
        )
        if record.replaced_at is not None:
            # Listed still, so its reviews stay reachable; counted nowhere.
            link = format_html(
                '{} <span class="flag replaced" title="{}">{}</span>',
                link,
                "A later push of its run changed or left out this answer; "
                "it no longer counts in the decision.",
                "replaced" if record.replaced_by_id else "retired",
            )
        if not record.no_citation_verifies:
            return link
        return format_html(
            '{} <span class="flag unknown no-citation-verifies" title="{}">'
            "no citation verifies</span>",
            link,
            NO_CITATION_VERIFIES,
        )

    def render_question(self, value: str) -> str:
        return value if len(value) <= 90 else value[:89] + "…"


STATUS_LABELS = dict(selectors.ClaimStatus.CHOICES)


class ClaimReviewTable(tables.Table):
    """The lead's claims table; every column comes from claim_rows' annotations."""

    answer = tables.Column(
        "Answer", accessor="answer__external_id", order_by=("answer_id", "order"), empty_values=()
    )
    order = tables.Column("#", attrs={"td": {"class": "num"}}, orderable=False)
    snippet = tables.Column("Claim", orderable=False)
    status = tables.Column("Status")
    submitted_count = tables.Column("Sheets", attrs={"td": {"class": "num"}})
    reviewers = tables.Column("Reviewers", accessor="pk", orderable=False)
    label = tables.Column("Machine label", order_by=("machine_check__label",))
    actions = tables.Column("", accessor="pk", orderable=False)

    class Meta:
        model = Claim
        fields = [
            "answer",
            "order",
            "snippet",
            "status",
            "submitted_count",
            "reviewers",
            "label",
            "actions",
        ]
        attrs = {"class": "table claims-table"}
        template_name = "audit/_one_pass_table.html"

    @property
    def page_rows(self) -> Rows:
        columns = [self.columns[name] for name in self.Meta.fields]

        def cells(record: Claim) -> list[str]:
            snippet, label = record.snippet, record.label
            return [
                self.render_answer(record),
                self.render_order(record),
                columns[2].default
                if snippet in columns[2].column.empty_values
                else self.render_snippet(snippet),
                self.render_status(record),
                self.render_submitted_count(record),
                self.render_reviewers(record),
                columns[6].default
                if label in columns[6].column.empty_values
                else self.render_label(label),
                self.render_actions(record),
            ]

        return one_pass_rows(self, cells)

    def render_answer(self, record: Claim) -> str:
        return format_html(
            '<a href="{}">{}</a>',
            record.get_absolute_url(),
            record.answer.external_id or f"#{record.answer_id}",
        )

    def render_order(self, record: Claim) -> str:
        if record.parent_id:
            return f"↳{record.order + 1}"
        if record.answers_question:
            return format_html(
                '{} <span class="answers-q" title="Marked by a lead as answering the question">'
                "answers Q</span>",
                record.order + 1,
            )
        return str(record.order + 1)

    def render_snippet(self, value: str) -> str:
        return value if len(value) < 160 else value + "…"

    def render_status(self, record: Claim) -> str:
        if record.status == selectors.ClaimStatus.PARTLY:
            text = f"{record.submitted_count} of {record.assigned_count}"
        else:
            text = STATUS_LABELS[record.status]
        return format_html('<span class="status status-{}">{}</span>', record.status, text)

    def render_submitted_count(self, record: Claim) -> str:
        return f"{record.submitted_count} / {record.assigned_count}"

    def render_reviewers(self, record: Claim) -> str:
        return ", ".join(a.reviewer.username for a in record.assignments.all()) or "—"

    def render_label(self, value: str | None) -> str:
        if not value:
            return "—"
        return format_html('<span class="label label-{}">{}</span>', value, value)

    def render_actions(self, record: Claim) -> str:
        links = []
        if record.status in (
            selectors.ClaimStatus.DISAGREEMENT,
            selectors.ClaimStatus.SUBMITTED,
            selectors.ClaimStatus.ADJUDICATED,
        ):
            text = "Gold" if record.status == selectors.ClaimStatus.ADJUDICATED else "Adjudicate"
            links.append((reverse("audit:adjudicate", args=[record.pk]), text))
        # Every claim has a history page, drafts and assignments included: a lead looking
        # for what happened to a claim should not have to guess whether there is any.
        links.append((reverse("audit:claim-history", args=[record.pk]), "History"))
        if not record.parent_id and record.status not in (
            selectors.ClaimStatus.SPLIT,
            selectors.ClaimStatus.ADJUDICATED,
        ):
            links.append((reverse("audit:claim-split", args=[record.pk]), "Split"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)


class AdjudicationQueueTable(tables.Table):
    """The lead's disagreement queue; rows come from selectors.adjudication_queue."""

    severity = tables.Column("Why", orderable=False)
    answer = tables.Column("Answer", accessor="answer__external_id", orderable=False)
    snippet = tables.Column("Claim", orderable=False)
    system = tables.Column("System", orderable=False)
    judgments = tables.Column("Judgments", accessor="pk", orderable=False)
    label = tables.Column("Machine label", orderable=False)
    times = tables.Column("Active time", accessor="pk", orderable=False)
    actions = tables.Column("", accessor="pk", orderable=False)

    class Meta:
        model = Claim
        fields = [
            "severity",
            "answer",
            "snippet",
            "system",
            "judgments",
            "label",
            "times",
            "actions",
        ]
        attrs = {"class": "table queue-table"}
        orderable = False
        empty_text = "Nothing waiting: every finished claim has gold."

    def __init__(
        self, *args, anonymous: bool = False, letters: dict[int, str] | None = None, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.anonymous = anonymous
        # Each reviewer's letter in the set (selectors.sheet_letters): one person, one letter.
        self.letters = letters or {}

    def render_severity(self, record: Claim) -> str:
        return format_html(
            '<span class="sev sev-{}">{}</span>', record.severity, Severity(record.severity).label
        )

    def render_answer(self, record: Claim) -> str:
        return record.answer.external_id or f"#{record.answer_id}"

    def render_snippet(self, record: Claim) -> str:
        text = record.snippet if len(record.snippet) < 160 else record.snippet + "…"
        if record.parent_id:
            return format_html('<span class="muted">atomic ·</span> {}', text)
        return text

    def _letter(self, index: int, sheet) -> str:
        return self.letters.get(sheet.reviewer_id) or judgments.sheet_letter(index)

    def _who(self, index: int, sheet) -> str:
        letter = self._letter(index, sheet)
        return letter if self.anonymous else f"{letter} · {sheet.reviewer.username}"

    def render_judgments(self, record: Claim) -> str:
        return format_html_join(
            "",
            '<span class="who">{}</span> <span class="jdg jdg-{}">{}</span><br>',
            (
                (self._who(i, s), s.judgment, judgments.JUDGMENT_LABELS.get(s.judgment, "—"))
                for i, s in enumerate(record.submitted_sheets)
            ),
        )

    def render_label(self, value: str | None) -> str:
        if not value:
            return "—"
        return format_html('<span class="label label-{}">{}</span>', value, value)

    def render_times(self, record: Claim) -> str:
        return format_html_join(
            "",
            '<span class="who">{}</span> <span class="{}">{} s{}</span><br>',
            (
                (
                    self._letter(i, s),
                    "fast" if s.active_seconds < selectors.FAST_SECONDS else "",
                    s.active_seconds,
                    f" ⚠ under {selectors.FAST_SECONDS} s"
                    if s.active_seconds < selectors.FAST_SECONDS
                    else "",
                )
                for i, s in enumerate(record.submitted_sheets)
            ),
        )

    def render_actions(self, record: Claim) -> str:
        return format_html(
            '<a class="button small" href="{}">Adjudicate</a>',
            reverse("audit:adjudicate", args=[record.pk]),
        )
