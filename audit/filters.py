"""django-filter filter sets for the list pages."""

from __future__ import annotations

import django_filters

from audit.models import Answer, AuditSet


class AuditSetFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", label="Name")

    class Meta:
        model = AuditSet
        fields = ["name"]


class AnswerFilter(django_filters.FilterSet):
    system = django_filters.ChoiceFilter(choices=[], empty_label="any system")
    question = django_filters.CharFilter(
        field_name="question__text", lookup_expr="icontains", label="Question"
    )
    is_partial = django_filters.BooleanFilter(label="Has cited-unknown")

    class Meta:
        model = Answer
        fields = ["system", "question", "is_partial"]

    def __init__(self, *args, systems: list[str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.filters["system"].extra["choices"] = [(s, s) for s in systems or []]
