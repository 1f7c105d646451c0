"""Forms for automatic judges: the judge, its acceptance threshold and a run; and a webhook."""

from __future__ import annotations

import re

from django import forms
from django.conf import settings
from django.core.validators import MinValueValidator

from audit.models import Judge, JudgeRun, Webhook

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
