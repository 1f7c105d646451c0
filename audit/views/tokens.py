"""The API tokens page: a user makes personal tokens (each secret shown once) and revokes
them. Every signed-in user may; a token can do no more than its owner."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from audit import services
from audit.models import ApiToken

EXPIRY_CHOICES = [("", "Never"), ("30", "In 30 days"), ("90", "In 90 days"), ("365", "In a year")]


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. “CI of the RAG repo”.")
    scope = forms.ChoiceField(choices=ApiToken.Scope.choices, initial=ApiToken.Scope.READ)
    expires = forms.ChoiceField(choices=EXPIRY_CHOICES, required=False, label="Expires")


@login_required
def token_list(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires"]
        token, created = services.token_create(
            user=request.user,
            name=form.cleaned_data["name"],
            scope=form.cleaned_data["scope"],
            expires_at=timezone.now() + timedelta(days=int(days)) if days else None,
        )
        form = TokenForm()
    tokens = ApiToken.objects.filter(user=request.user)
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
