"""The API tokens page: a user makes personal tokens (each secret shown once), each for all
their workspaces or limited to one workspace or set, and revokes them. Every signed-in user
may; a token can do no more than its owner."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from audit import roles, selectors, services
from audit.models import ApiToken, AuditSet

EXPIRY_CHOICES = [("", "Never"), ("30", "In 30 days"), ("90", "In 90 days"), ("365", "In a year")]


class SetChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: AuditSet) -> str:
        return f"{obj.workspace.name} · {obj.name}"


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. “CI of the RAG repo”.")
    scope = forms.ChoiceField(choices=ApiToken.Scope.choices, initial=ApiToken.Scope.READ)
    workspace = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="All your workspaces"
    )
    audit_set = SetChoiceField(
        queryset=None,
        required=False,
        empty_label="The whole workspace",
        label="Set",
        help_text="Only this set of the workspace: every other one is unknown to the token.",
    )
    expires = forms.ChoiceField(choices=EXPIRY_CHOICES, required=False, label="Expires")

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = roles.member_workspaces(user).order_by("name")
        self.fields["audit_set"].queryset = (
            selectors.sets_visible_to(user=user)
            .select_related("workspace")
            .order_by("workspace__name", "name")
        )


@login_required
def token_list(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None, user=request.user)
    created = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires"]
        try:
            token, created = services.token_create(
                user=request.user,
                name=form.cleaned_data["name"],
                scope=form.cleaned_data["scope"],
                expires_at=timezone.now() + timedelta(days=int(days)) if days else None,
                workspace=form.cleaned_data["workspace"],
                audit_set=form.cleaned_data["audit_set"],
            )
        except services.TokenScopeRefused as refused:
            form.add_error("audit_set", str(refused))
        else:
            form = TokenForm(user=request.user)
    tokens = ApiToken.objects.filter(user=request.user).select_related("workspace", "audit_set")
    response = render(
        request,
        "audit/tokens.html",
        {"form": form, "created": created, "tokens": tokens, "now": timezone.now()},
    )
    # The new secret is on this page only once: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@login_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = ApiToken.objects.filter(user=request.user, pk=pk).first()
    if token is None:
        raise Http404("No such token.")
    services.token_revoke(token=token)
    messages.success(request, f"Revoked “{token.name}”: it no longer works.")
    return redirect("audit:token-list")
