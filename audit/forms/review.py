"""Forms of the review: the audit sheet and its judgment fields, flags, skips, comments,
opening a set for review, replacing a reviewer, controls, and splitting a claim."""

from __future__ import annotations

import json

from django import forms

from audit import claims as claim_parsing
from audit import judgments, selectors
from audit.judgments import Assertion, EvidenceRef, JudgmentData
from audit.models import AuditSet
from audit.services.assignment import OVERLAP_MAX
from audit.services.calibration import CONTROL_RATE_MAX
from audit.services.splits import AtomicPart


class EvidenceField(forms.Field):
    """Evidence sentences posted as repeated "passage:start:end" values."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> tuple[EvidenceRef, ...]:
        try:
            return tuple(judgments.parse_evidence_key(item) for item in value or ())
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


class AssertionField(forms.Field):
    """Unsupported spans of the claim posted as repeated JSON objects {"start", "end",
    "note"} (and optionally "text", checked against the claim by the service)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> tuple[Assertion, ...]:
        items = []
        for raw in value or ():
            try:
                item = json.loads(raw)
            except (TypeError, ValueError):
                raise forms.ValidationError("Not an unsupported span.") from None
            if not isinstance(item, dict):
                raise forms.ValidationError("Not an unsupported span.")
            start, end, note = item.get("start"), item.get("end"), item.get("note", "")
            text = item.get("text")
            if not (
                isinstance(start, int)
                and isinstance(end, int)
                and not isinstance(start, bool)
                and not isinstance(end, bool)
                and isinstance(note, str)
                and (text is None or isinstance(text, str))
            ):
                raise forms.ValidationError("Not an unsupported span.")
            items.append(Assertion(text=text, start=start, end=end, note=note))
        return tuple(items)


class JudgmentForm(forms.Form):
    """The judgment's fields, as the review page and the adjudication page post them."""

    judgment = forms.ChoiceField(
        choices=[("", "—"), *judgments.JUDGMENTS], required=False, widget=forms.RadioSelect
    )
    evidence = EvidenceField(required=False)
    wrong_citation_passage = forms.TypedChoiceField(
        coerce=int, empty_value=None, required=False, label="Passage that does support it"
    )
    unsupported_assertions = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Unsupported assertions",
        help_text="One per line: words of the claim that no evidence supports.",
    )
    unsupported_item = AssertionField(required=False, label="Unsupported spans")

    def __init__(self, *args, passage_positions: list[int] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["wrong_citation_passage"].choices = [("", "—")] + [
            (n, f"[{n}]") for n in passage_positions
        ]
        for flag in judgments.FLAGS:
            self.fields[flag.name] = forms.BooleanField(required=False, label=flag.label)

    def judgment_data(self) -> JudgmentData:
        data = self.cleaned_data
        return JudgmentData(
            judgment=data["judgment"],
            evidence=data["evidence"],
            wrong_citation_passage=data["wrong_citation_passage"],
            unsupported_assertions=(
                *data["unsupported_item"],
                *data["unsupported_assertions"].splitlines(),
            ),
            notes=data.get("notes", ""),
            **{name: data[name] for name in judgments.FLAG_NAMES},
        )


class SheetForm(JudgmentForm):
    """What the review page posts, on every autosave and on submit."""

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    notes = forms.CharField(
        required=False, max_length=10000, widget=forms.Textarea(attrs={"rows": 3})
    )
    active_seconds = forms.IntegerField(
        required=False, min_value=0, max_value=24 * 3600, widget=forms.HiddenInput
    )

    def sheet_data(self) -> JudgmentData:
        return self.judgment_data()


class FlagForm(forms.Form):
    flag_comment = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="What should the guidelines settle?",
    )


class SkipForm(forms.Form):
    skip_reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why skip it for now?",
    )


class ControlSettingsForm(forms.Form):
    control_rate = forms.IntegerField(
        min_value=0,
        max_value=CONTROL_RATE_MAX,
        label="One control in N claims",
        help_text="0: no controls. Controls are mixed into every reviewer’s queue.",
    )
    calibration_threshold = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        label="Alert below accuracy",
        help_text="A share, 0–1: a reviewer measured below it is shown on the progress page.",
    )


class CommentForm(forms.Form):
    body = forms.CharField(
        max_length=10_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Comment",
        help_text="Markdown; @name mentions a reviewer or lead of this claim.",
    )


def _with_role(user) -> str:
    """A candidate as the lists name them: "lena (owner)", a reviewer by name alone."""
    role = getattr(user, "workspace_role", "")
    name = user.get_username()
    return name if role in ("", "reviewer") else f"{name} ({role})"


class CandidatesField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj) -> str:
        return _with_role(obj)


class CandidateField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return _with_role(obj)


class ReviewOpenForm(forms.Form):
    reviewers = CandidatesField(
        queryset=None, widget=forms.CheckboxSelectMultiple, label="Reviewers"
    )
    overlap = forms.IntegerField(
        min_value=1,
        max_value=OVERLAP_MAX,
        initial=2,
        help_text="Reviewers who judge each claim.",
    )
    allow_reviewer_split = forms.BooleanField(
        required=False, label="Reviewers may split claims into atomic facts before judging"
    )

    def __init__(self, *args, audit_set: AuditSet, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reviewers"].queryset = selectors.review_candidates(audit_set=audit_set)

    def clean(self) -> dict:
        cleaned = super().clean()
        chosen, overlap = cleaned.get("reviewers"), cleaned.get("overlap")
        if chosen is not None and overlap is not None and len(chosen) < overlap:
            raise forms.ValidationError(
                f"An overlap of {overlap} needs at least {overlap} reviewers."
            )
        return cleaned


class ReviewerReplaceForm(forms.Form):
    leaving = forms.ModelChoiceField(queryset=None, label="Reviewer who left")
    joining = CandidateField(queryset=None, label="Hand their open claims to")

    def __init__(self, *args, audit_set: AuditSet, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["leaving"].queryset = selectors.set_assignees(audit_set=audit_set)
        self.fields["joining"].queryset = selectors.review_candidates(audit_set=audit_set)

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("leaving") and cleaned.get("leaving") == cleaned.get("joining"):
            raise forms.ValidationError("Choose two different reviewers.")
        return cleaned


class ClaimSplitForm(forms.Form):
    parts = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        label="Atomic facts, one per line",
        help_text=(
            "Each line becomes a claim judged on its own. It keeps the claim's citations; "
            "end a line with markers such as [2] to cite other passages instead."
        ),
        max_length=10000,
    )

    def clean_parts(self) -> list[AtomicPart]:
        parts = []
        for line in self.cleaned_data["parts"].splitlines():
            markers = claim_parsing.find_markers(line)
            text = claim_parsing.strip_markers(line).strip() if markers else line.strip()
            if not text:
                continue
            numbers = tuple(dict.fromkeys(n for m in markers for n in m.numbers))
            parts.append(AtomicPart(text=text, citations=numbers or None))
        if len(parts) < 2:
            raise forms.ValidationError("Give at least two atomic facts, one per line.")
        return parts
