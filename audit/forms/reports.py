"""Forms of the results: the agreement dashboard's filters, machine-verdict upload, the
acceptance criteria and comparing runs."""

from __future__ import annotations

from django import forms


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


class SuggestionUploadForm(forms.Form):
    name = forms.CharField(
        max_length=100, label="Source name", help_text="The model's name, e.g. nli-checker."
    )
    version = forms.CharField(
        max_length=100,
        label="Version",
        help_text="A new version is a new source, so its figures never mix with the old one's.",
    )
    description = forms.CharField(
        required=False, label="Description", widget=forms.Textarea(attrs={"rows": 2})
    )
    file = forms.FileField(
        allow_empty_file=True,
        label="Suggestions file (JSONL)",
        help_text=(
            "One claim per line: claim (its id or name, e.g. “hm-1-a claim 2”), and any of "
            "judgment, judgment_score, evidence, unsupported, wrong_citation."
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
