"""A set's webhooks: the lead registers URLs for its events, sees each one's secret and the
log of deliveries, and removes them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods, require_POST

from audit import services
from audit.forms import WebhookForm
from audit.models import WebhookDelivery
from audit.services.webhooks import SIGNATURE_HEADER
from audit.views import access
from audit.views.access import HtmxHttpRequest

# Deliveries shown per webhook: the newest; older ones stay in the database.
LOG = 20


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def set_webhooks(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.webhook_create(
                audit_set=audit_set,
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
                user=request.user,
            )
        except services.WebhookRefused as refusal:
            form.add_error("url", str(refusal))
        else:
            messages.success(request, "Webhook added. Its secret signs every delivery.")
            return redirect("audit:set-webhooks", audit_set.pk)
    hooks = [
        (hook, list(WebhookDelivery.objects.filter(webhook=hook)[:LOG]))
        for hook in audit_set.webhooks.all()
    ]
    ctx = {
        "audit_set": audit_set,
        "form": form,
        "hooks": hooks,
        "signature_header": SIGNATURE_HEADER,
    }
    return access.render_page_or_partial(request, "audit/set_webhooks.html", "hooks", ctx)


@login_required
@require_POST
def webhook_delete(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    webhook = access.get_webhook_for_lead(request, pk)
    audit_set_id = webhook.audit_set_id
    services.webhook_delete(webhook=webhook, user=request.user)
    messages.success(request, "Webhook removed.")
    return redirect("audit:set-webhooks", audit_set_id)
