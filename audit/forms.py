"""Forms for the lead's pages: creating sets and uploading answer files."""

from __future__ import annotations

from django import forms

from audit.models import AuditSet

FORMATS = ("native", "alce", "ragas", "expertqa")


class AuditSetForm(forms.ModelForm):
    class Meta:
        model = AuditSet
        fields = ["name", "description", "guidelines"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 8}),
        }


class ImportForm(forms.Form):
    audit_set = forms.ModelChoiceField(
        queryset=AuditSet.objects.all(), required=False, label="Into set", empty_label="(new set)"
    )
    new_set_name = forms.CharField(max_length=200, required=False, label="New set name")
    file = forms.FileField()
    format = forms.ChoiceField(
        choices=[("auto", "Detect")] + [(f, f) for f in FORMATS], initial="auto"
    )

    def clean(self) -> dict:
        cleaned = super().clean()
        chosen = cleaned.get("audit_set")
        name = (cleaned.get("new_set_name") or "").strip()
        if not chosen and not name:
            raise forms.ValidationError("Choose a set or name a new one.")
        if not chosen and AuditSet.objects.filter(name=name).exists():
            self.add_error("new_set_name", "A set with this name exists; choose it above.")
        cleaned["new_set_name"] = name
        return cleaned
