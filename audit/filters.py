"""django-filter filter sets for the list pages."""

from __future__ import annotations

import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, QuerySet

from audit import judgments, selectors
from audit.models import Answer, AuditSet, AuditSheet, Claim, ClaimCheck, Severity


class AnyYesNo(django_filters.widgets.BooleanWidget):
    """A yes/no filter whose empty choice reads "any", not "Unknown"."""

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__(attrs)
        self.choices = [("", "any"), ("true", "yes"), ("false", "no")]


class AuditSetFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", label="Name")
    workspace = django_filters.ChoiceFilter(
        field_name="workspace_id", choices=[], empty_label="any workspace", label="Workspace"
    )

    class Meta:
        model = AuditSet
        fields = ["name", "workspace"]

    def __init__(self, *args, workspaces: list[tuple[int, str]] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only the workspaces of sets the user may open: no other workspace's name leaks.
        self.filters["workspace"].extra["choices"] = workspaces or []


class AnswerFilter(django_filters.FilterSet):
    system = django_filters.ChoiceFilter(choices=[], empty_label="any system")
    question = django_filters.CharFilter(
        field_name="question__text", lookup_expr="icontains", label="Question"
    )
    is_partial = django_filters.BooleanFilter(label="Has cited-unknown", widget=AnyYesNo)
    no_citation_verifies = django_filters.BooleanFilter(
        label="No citation verifies", widget=AnyYesNo
    )
    # yes: answers a later push of their run replaced or retired; no: the current ones.
    replaced = django_filters.BooleanFilter(
        field_name="replaced_at",
        lookup_expr="isnull",
        exclude=True,
        label="Replaced",
        widget=AnyYesNo,
    )

    class Meta:
        model = Answer
        fields = ["system", "question", "is_partial", "no_citation_verifies", "replaced"]

    def __init__(self, *args, systems: list[str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.filters["system"].extra["choices"] = [(s, s) for s in systems or []]


class ClaimReviewFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        choices=selectors.ClaimStatus.CHOICES, empty_label="any status", label="Status"
    )
    reviewer = django_filters.ModelChoiceFilter(
        queryset=None, method="filter_reviewer", empty_label="any reviewer", label="Reviewer"
    )
    label = django_filters.ChoiceFilter(
        field_name="machine_check__label",
        choices=ClaimCheck.Label.choices,
        empty_label="any machine label",
        label="Machine label",
    )
    system = django_filters.ChoiceFilter(
        field_name="answer__system", choices=[], empty_label="any system", label="System"
    )
    text = django_filters.CharFilter(field_name="text", lookup_expr="icontains", label="Claim")
    answers_question = django_filters.BooleanFilter(
        field_name="answers_question",
        label="Answers the question",
        widget=forms.Select(
            choices=[("", "any claim"), ("true", "marked as answering"), ("false", "not marked")]
        ),
    )

    class Meta:
        model = Claim
        fields = ["status", "reviewer", "label", "system", "text", "answers_question"]

    def __init__(self, *args, audit_set: AuditSet, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The users with assignments in the set, from their tallies (one row per reviewer
        # and set): DISTINCT over the set's assignments reads them all (40-180 ms at 100k
        # claims), and a LIMIT 1 probe per user scans them all for a user who has none.
        self.filters["reviewer"].queryset = (
            get_user_model()
            .objects.filter(review_tallies__audit_set=audit_set, review_tallies__assigned__gt=0)
            .order_by("username")
        )
        systems = (
            Answer.objects.filter(audit_set=audit_set)
            .order_by("system")
            .values_list("system", flat=True)
            .distinct()
        )
        self.filters["system"].extra["choices"] = [(s, s) for s in systems]

    def filter_reviewer(self, queryset: QuerySet[Claim], name: str, value) -> QuerySet[Claim]:
        return queryset.filter(assignments__reviewer=value)


class AdjudicationQueueFilter(django_filters.FilterSet):
    severity = django_filters.ChoiceFilter(
        choices=Severity.choices, empty_label="any reason", label="Why"
    )
    judgment = django_filters.ChoiceFilter(
        choices=judgments.JUDGMENTS,
        method="filter_judgment",
        empty_label="any judgment",
        label="A reviewer said",
    )
    fast = django_filters.BooleanFilter(
        field_name="has_fast",
        label=f"A sheet done in under {selectors.FAST_SECONDS} s",
        widget=AnyYesNo,
    )
    label = django_filters.ChoiceFilter(
        choices=ClaimCheck.Label.choices, empty_label="any machine label", label="Machine label"
    )
    system = django_filters.ChoiceFilter(
        field_name="answer__system", choices=[], empty_label="any system", label="System"
    )

    class Meta:
        model = Claim
        fields = ["severity", "judgment", "fast", "label", "system"]

    def __init__(self, *args, audit_set: AuditSet, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.filters["system"].extra["choices"] = [
            (s, s) for s in selectors.set_systems(audit_set=audit_set)
        ]

    def filter_judgment(self, queryset: QuerySet[Claim], name: str, value: str) -> QuerySet[Claim]:
        said = AuditSheet.objects.filter(
            claim=OuterRef("pk"), status=AuditSheet.Status.SUBMITTED, judgment=value
        )
        return queryset.filter(Exists(said))
