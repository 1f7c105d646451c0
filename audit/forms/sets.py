"""Forms for sets: creating one (in a workspace the user leads), editing it, and uploading
answer files."""

from __future__ import annotations

from django import forms

from audit import roles, selectors
from audit.models import AuditSet

FORMATS = ("native", "alce", "ragas", "expertqa", "citeaudit")


class WorkspaceChoiceField(forms.ModelChoiceField):
    """The workspaces where a user may create sets. With only one, it may be left out (a
    form posted by a script, or before the page offered a choice) and means that one."""

    def clean(self, value):
        if value in self.empty_values and self.queryset.count() == 1:
            return self.queryset.get()
        return super().clean(value)


def _workspace_field(user) -> forms.ModelChoiceField:
    choices = roles.lead_workspaces(user).order_by("name")
    field = WorkspaceChoiceField(queryset=choices, label="Workspace", empty_label=None)
    field.initial = choices.first() if choices.count() == 1 else None
    return field


class AuditSetForm(forms.ModelForm):
    """A new set's fields; services.set_create checks the name and the texts' lengths."""

    class Meta:
        model = AuditSet
        fields = ["workspace", "name", "description", "guidelines", "is_training"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 8}),
        }

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["workspace"] = _workspace_field(user)

    def validate_constraints(self) -> None:
        # The name's uniqueness is the service's rule (services.set_create), said once.
        pass


class AuditSetEditForm(forms.ModelForm):
    """A set's name, description, training mode and guidelines, edited in the app; a change
    of the guidelines needs a change note (services.set_settings_update)."""

    change_note = forms.CharField(
        max_length=500,
        required=False,
        label="Change note",
        help_text="What changed in the guidelines and why; kept with the new version.",
    )

    class Meta:
        model = AuditSet
        fields = ["name", "description", "guidelines", "is_training"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 14}),
        }

    def validate_constraints(self) -> None:
        # The name's uniqueness is the service's rule (services.set_settings_update).
        pass


class ImportForm(forms.Form):
    audit_set = forms.ModelChoiceField(
        queryset=AuditSet.objects.none(), required=False, label="Into set", empty_label="(new set)"
    )
    new_set_name = forms.CharField(max_length=200, required=False, label="New set name")
    # Only read for a new set: an existing set stays in its workspace.
    workspace = forms.ModelChoiceField(queryset=None, required=False, label="New set's workspace")
    # Empty files reach the parser, whose error names the file.
    file = forms.FileField(allow_empty_file=True)
    format = forms.ChoiceField(
        choices=[("auto", "Detect")] + [(f, f) for f in FORMATS], initial="auto"
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["audit_set"].queryset = selectors.sets_led_by(user=user)
        workspace = _workspace_field(user)
        workspace.required, workspace.label = False, "New set's workspace"
        self.fields["workspace"] = workspace

    def clean(self) -> dict:
        cleaned = super().clean()
        chosen = cleaned.get("audit_set")
        name = (cleaned.get("new_set_name") or "").strip()
        workspace = cleaned.get("workspace")
        if not chosen and not name:
            raise forms.ValidationError("Choose a set or name a new one.")
        if not chosen and not workspace:
            self.add_error("workspace", "Choose the new set's workspace.")
        if (
            not chosen
            and workspace
            and selectors.set_name_taken(workspace_id=workspace.pk, name=name)
        ):
            self.add_error("new_set_name", "A set with this name exists; choose it above.")
        cleaned["new_set_name"] = name
        return cleaned


class SuggestionSettingsForm(forms.Form):
    """Which source pre-highlights the review page, whether its suggested judgment is shown,
    and the share of claims withheld from suggestions (services.set_suggestion_settings
    checks each; the share is entered in percent)."""

    source_key = forms.ChoiceField(label="Suggestions from")
    show_judgment = forms.BooleanField(label="Show the suggested judgment", required=False)
    withhold_percent = forms.FloatField(
        label="Withhold suggestions from a share of claims (%)",
        min_value=0,
        max_value=90,
        required=False,
        widget=forms.NumberInput(attrs={"step": "1"}),
        help_text=(
            "Reviewers see no suggestion on this share of claims, drawn at random, so the "
            "report can compare judgments made with and without them. Chosen before review "
            "starts; fixed from the first submitted sheet on."
        ),
    )

    def __init__(self, *args, sources, locked_since=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["source_key"].choices = [
            (str(s.key), f"{s.name} ({s.version})" if s.version else s.name) for s in sources
        ]
        if locked_since is not None:
            field = self.fields["withhold_percent"]
            # A disabled field keeps its initial value whatever is posted.
            field.disabled = True
            field.help_text = (
                f"Fixed since review started ({locked_since:%Y-%m-%d %H:%M} UTC): changing "
                "it now would spoil the comparison with and without suggestions."
            )
