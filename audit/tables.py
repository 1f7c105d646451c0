"""django-tables2 tables for the list pages."""

from __future__ import annotations

import django_tables2 as tables

from audit.models import Answer, AuditSet


class AuditSetTable(tables.Table):
    name = tables.Column(linkify=True)
    answer_count = tables.Column("Answers", attrs={"td": {"class": "num"}})
    claim_count = tables.Column("Claims", attrs={"td": {"class": "num"}})
    uncited_count = tables.Column("Uncited", attrs={"td": {"class": "num"}})
    unknown_count = tables.Column("Cited-unknown", attrs={"td": {"class": "num"}})
    created_at = tables.DateTimeColumn(format="Y-m-d H:i", verbose_name="Created")

    class Meta:
        model = AuditSet
        fields = [
            "name",
            "answer_count",
            "claim_count",
            "uncited_count",
            "unknown_count",
            "created_at",
        ]
        order_by = "-created_at"
        attrs = {"class": "table"}


class AnswerTable(tables.Table):
    external_id = tables.Column("Answer", linkify=True, empty_values=())
    question = tables.Column(
        "Question", accessor="question__text", order_by="question__external_id"
    )
    system = tables.Column()
    claim_count = tables.Column("Claims", attrs={"td": {"class": "num"}})
    verified_count = tables.Column("Verified", attrs={"td": {"class": "num"}})
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

    def render_external_id(self, record: Answer) -> str:
        return record.external_id or f"#{record.pk}"

    def render_question(self, value: str) -> str:
        return value if len(value) <= 90 else value[:89] + "…"
