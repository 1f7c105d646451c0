"""Forms: creating sets and uploading answer files, the review sheet, opening a set for
review, replacing a reviewer, splitting a claim into atomic facts, and the lead's
adjudication, its settings, the agreement dashboard's filters and machine-verdict upload."""

from __future__ import annotations

import json
import re

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import MinValueValidator

from audit import claims as claim_parsing
from audit import judgments, roles, selectors
from audit.judgments import Assertion, EvidenceRef, JudgmentData
from audit.models import Adjudication, AuditSet, Judge, JudgeRun, Membership, Webhook
from audit.services.splits import AtomicPart

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


# ------------------------------------------------------------------------------ review


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
        max_value=1000,
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


class ReviewOpenForm(forms.Form):
    reviewers = forms.ModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple, label="Reviewers"
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=5, initial=2, help_text="Reviewers who judge each claim."
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
    joining = forms.ModelChoiceField(queryset=None, label="Hand their open claims to")

    def __init__(self, *args, audit_set: AuditSet, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        users = get_user_model().objects.order_by("username")
        self.fields["leaving"].queryset = users.filter(
            assignments__claim__answer__audit_set=audit_set
        ).distinct()
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


# ------------------------------------------------------------------------ adjudication


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


class DashboardFilterForm(forms.Form):
    system = forms.ChoiceField(required=False, label="System")
    pair = forms.ChoiceField(required=False, label="Reviewer pair")

    def __init__(self, *args, systems: list[str], pairs: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["system"].choices = [("", "all systems")] + [(s, s) for s in systems]
        self.fields["pair"].choices = [("", "all reviewers")] + pairs


class VerdictUploadForm(forms.Form):
    file = forms.FileField(
        allow_empty_file=True,
        label="Verdict file (JSONL)",
        help_text=(
            "One verdict per line: judge, answer_id, claim_index (0-based) or claim_text, "
            "judgment, optional evidence (list of quotes) and rationale."
        ),
    )


class CriteriaForm(forms.Form):
    """The acceptance criteria a lead can set, one of each kind, each switched on or off."""

    no_contradicted = forms.BooleanField(required=False, label="No contradicted claim")
    no_contradicted_topics = forms.CharField(
        required=False,
        label="only in answers tagged",
        help_text="Comma-separated topics, e.g. pay, leave, termination; empty: every answer.",
    )
    numbers_grounded = forms.BooleanField(
        required=False, label="Every number found in the cited passages"
    )
    numbers_grounded_only_supported = forms.BooleanField(
        required=False, label="only for claims judged supported"
    )
    min_supported_share = forms.BooleanField(
        required=False, label="Minimum share of claims fully supported"
    )
    min_supported_share_percent = forms.FloatField(
        required=False, min_value=0, max_value=100, label="percent"
    )
    uncited_only_if_not_worthy = forms.BooleanField(
        required=False, label="Uncited claims only where marked not verification-worthy"
    )
    max_wrong_citations = forms.BooleanField(required=False, label="At most N wrong citations")
    max_wrong_citations_limit = forms.IntegerField(required=False, min_value=0, label="limit")
    answering_claims_backed = forms.BooleanField(
        required=False,
        label="No claim that answers the question partially or not supported",
    )
    no_unsupported_numbers = forms.BooleanField(
        required=False, label="No unsupported assertion containing a number or date"
    )
    reason = forms.CharField(
        required=False,
        max_length=2000,
        label="Why the criteria change",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown with every decision made on the new criteria.",
    )

    def __init__(self, *args, locked: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Once review has started a change needs a reason (the service refuses one without).
        self.fields["reason"].required = locked

    @classmethod
    def initial_for(cls, criteria: list[dict]) -> dict:
        initial: dict = {}
        for item in criteria:
            kind = item.get("kind")
            initial[kind] = True
            if kind == "no_contradicted":
                initial["no_contradicted_topics"] = ", ".join(item.get("topics", []))
            elif kind == "numbers_grounded":
                initial["numbers_grounded_only_supported"] = item.get("only_supported", False)
            elif kind == "min_supported_share":
                initial["min_supported_share_percent"] = item.get("percent")
            elif kind == "max_wrong_citations":
                initial["max_wrong_citations_limit"] = item.get("limit")
        return initial

    def clean(self) -> dict:
        data = super().clean()
        # A value the field itself refused (150 %) is not also reported as missing.
        if (
            data.get("min_supported_share")
            and data.get("min_supported_share_percent") is None
            and "min_supported_share_percent" not in self.errors
        ):
            self.add_error("min_supported_share_percent", "Give the minimum percent.")
        if (
            data.get("max_wrong_citations")
            and data.get("max_wrong_citations_limit") is None
            and "max_wrong_citations_limit" not in self.errors
        ):
            self.add_error("max_wrong_citations_limit", "Give the limit.")
        return data

    def criteria(self) -> list[dict]:
        """The checked criteria in audit.criteria's JSON form."""
        data = self.cleaned_data
        items: list[dict] = []
        if data["no_contradicted"]:
            topics = [t.strip() for t in data["no_contradicted_topics"].split(",") if t.strip()]
            items.append({"kind": "no_contradicted", "topics": topics})
        if data["numbers_grounded"]:
            items.append(
                {
                    "kind": "numbers_grounded",
                    "only_supported": data["numbers_grounded_only_supported"],
                }
            )
        if data["min_supported_share"]:
            percent = data["min_supported_share_percent"]
            items.append(
                {
                    "kind": "min_supported_share",
                    "percent": int(percent) if percent == int(percent) else percent,
                }
            )
        if data["uncited_only_if_not_worthy"]:
            items.append({"kind": "uncited_only_if_not_worthy"})
        for kind in ("answering_claims_backed", "no_unsupported_numbers"):
            if data[kind]:
                items.append({"kind": kind})
        if data["max_wrong_citations"]:
            items.append(
                {"kind": "max_wrong_citations", "limit": data["max_wrong_citations_limit"]}
            )
        return items


class CompareForm(forms.Form):
    a = forms.ChoiceField(label="Before (A)")
    b = forms.ChoiceField(label="After (B)")

    def __init__(
        self, *args, runs: list, defaults: tuple[str, str] | None = None, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        choices = [(run.key, run.name) for run in runs]
        self.fields["a"].choices = choices
        self.fields["b"].choices = choices
        # Both selects on the first run would offer a comparison the form then refuses.
        if defaults is not None:
            self.fields["a"].initial, self.fields["b"].initial = defaults

    def clean(self) -> dict:
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Pick two different runs.")
        return data


JUDGE_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class JudgeForm(forms.ModelForm):
    """An automatic judge's settings and prompt template; the key itself is never asked for."""

    template = forms.CharField(
        label="Prompt template",
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}),
        help_text=(
            "$guidelines, $question, $answer (claim marked ⟦…⟧), $claim, $passages (numbered "
            "sentences), $judgments and $reply_format are filled in. Editing it, the model or "
            "the temperature makes a new version."
        ),
    )

    class Meta:
        model = Judge
        fields = [
            "name",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "max_concurrency",
            "timeout_seconds",
            "price_per_million",
        ]
        widgets = {
            "base_url": forms.TextInput(attrs={"size": 60}),
            "model": forms.TextInput(attrs={"size": 40}),
            "api_key_env": forms.TextInput(attrs={"size": 40, "autocomplete": "off"}),
        }
        help_texts = {
            "base_url": "An OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or "
            "http://localhost:8001/v1 (vLLM, Ollama, LiteLLM).",
            "max_concurrency": "Requests in flight at once (1–32).",
            "timeout_seconds": "A request with no complete reply after this long is stored as a "
            "timeout.",
            "api_key_env": "The name of an environment variable the operator set for judges: "
            "CITEAUDIT_JUDGE_KEY_ and a name, e.g. CITEAUDIT_JUDGE_KEY_OPENAI; empty: no key.",
        }

    def clean_base_url(self) -> str:
        url = self.cleaned_data["base_url"].strip()
        if not url.startswith(("http://", "https://")):
            raise forms.ValidationError("Give an http:// or https:// URL.")
        return url

    def clean_api_key_env(self) -> str:
        name = self.cleaned_data["api_key_env"].strip()
        if name and not JUDGE_ENV_NAME.fullmatch(name):
            raise forms.ValidationError(
                "The name of an environment variable (letters, digits, _), not the key itself."
            )
        return name


class JudgeThresholdForm(forms.Form):
    min_kappa = forms.FloatField(
        label="Lowest κ",
        min_value=-1.0,
        max_value=1.0,
        help_text="The low end of κ’s 95% interval against gold must reach this.",
    )
    min_gold = forms.IntegerField(label="Gold claims at least", min_value=1)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The operator's floor, read per form so a changed setting applies at once.
        floor = settings.JUDGE_MIN_GOLD_FLOOR
        field = self.fields["min_gold"]
        field.min_value = floor
        field.widget.attrs["min"] = floor
        field.validators = [
            *(v for v in field.validators if not isinstance(v, MinValueValidator)),
            MinValueValidator(floor),
        ]
        field.help_text = f"Calibrated on at least this many (at least {floor})."


class JudgeRunForm(forms.Form):
    subset = forms.ChoiceField(label="Claims")
    system = forms.ChoiceField(label="System", required=False)

    def __init__(self, *args, systems: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["subset"].choices = JudgeRun.Subset.choices
        self.fields["system"].choices = [("", "—")] + [(s, s) for s in systems]

    def clean(self) -> dict:
        data = super().clean()
        if data.get("subset") == "system" and not data.get("system"):
            self.add_error("system", "Choose the system.")
        return data


class WebhookForm(forms.Form):
    """A webhook as a lead registers it; the URL's scheme is checked by the service, which
    says why it refuses one."""

    url = forms.CharField(
        max_length=500,
        label="URL",
        help_text="An http:// or https:// address that accepts a POST of JSON.",
        widget=forms.URLInput(attrs={"placeholder": "https://ci.example.org/hooks/citeaudit"}),
    )
    events = forms.MultipleChoiceField(
        choices=Webhook.Event.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=list(Webhook.Event.values),
    )


# -------------------------------------------------------------------------- workspaces


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=100, label="New workspace")


class InvitationForm(forms.Form):
    email = forms.EmailField(label="Email")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.REVIEWER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices, label="Role")
