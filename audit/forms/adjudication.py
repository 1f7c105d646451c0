"""Forms of the lead's adjudication: how finished claims are compared, and a gold record."""

from __future__ import annotations

from django import forms

from audit.forms.review import JudgmentForm
from audit.judgments import JudgmentData
from audit.models import Adjudication, AuditSet


class AdjudicationSettingsForm(forms.ModelForm):
    class Meta:
        model = AuditSet
        fields = ["auto_gold", "evidence_jaccard_threshold", "anonymous_adjudication"]
        widgets = {
            "evidence_jaccard_threshold": forms.NumberInput(
                attrs={"step": "0.05", "min": "0", "max": "1"}
            )
        }


class AdjudicationForm(JudgmentForm):
    """What the adjudication page posts: take one sheet whole, or save the merged version."""

    version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    take = forms.IntegerField(required=False, widget=forms.HiddenInput)
    reason = forms.ChoiceField(choices=Adjudication.Reason.choices, required=False)
    note = forms.CharField(required=False, max_length=10000, widget=forms.Textarea)
    flag = forms.BooleanField(required=False, label="Flag for guideline update")
    flag_comment = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    numbers_overridden = forms.BooleanField(required=False, label="Override the number check")
    numbers_override_reason = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea, label="Why the numbers hold"
    )

    def clean(self) -> dict:
        cleaned = super().clean()
        if (
            cleaned.get("numbers_overridden")
            and not (cleaned.get("numbers_override_reason") or "").strip()
        ):
            self.add_error("numbers_override_reason", "Say why the number check is overridden.")
        if cleaned.get("flag"):
            comment = (cleaned.get("flag_comment") or cleaned.get("note") or "").strip()
            if not comment:
                self.add_error("flag_comment", "Say what the guidelines should settle.")
            cleaned["flag_comment"] = comment
        else:
            cleaned["flag_comment"] = ""
        return cleaned

    def gold_data(self) -> JudgmentData:
        return self.judgment_data()
