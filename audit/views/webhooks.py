"""A set's webhooks: the lead registers URLs for its events, sees each one's secret once,
as it is made, and the log of deliveries, and removes them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from audit import selectors, services
from audit.forms import WebhookForm
from audit.models import Webhook, WebhookDelivery
from audit.services.webhooks import SIGNATURE_HEADER
from audit.views import access
from audit.views.access import HtmxHttpRequest

# Deliveries shown per webhook: the newest; older ones stay in the database.
LOG = 20


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def set_webhooks(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form, created = _form_and_added(request, audit_set=audit_set)
    ctx = {
        "audit_set": audit_set,
        "workspace_hooks": audit_set.workspace.webhooks.count(),
        "form": form,
        "created": created,
        "hooks": _with_log(audit_set.webhooks.all()),
        "signature_header": SIGNATURE_HEADER,
    }
    return _once(access.render_page_or_partial(request, "audit/set_webhooks.html", "hooks", ctx))


def _form_and_added(request: HtmxHttpRequest, **owner) -> tuple[WebhookForm, Webhook | None]:
    """The add form, and the hook a valid post added to `owner` (a set or a workspace)
    through the one service the API calls too; a refused URL is the form's error."""
    form = WebhookForm(request.POST or None)
    if request.method != "POST" or not form.is_valid():
        return form, None
    try:
        created = services.webhook_create(
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            user=request.user,
            **owner,
        )
    except services.WebhookRefused as refusal:
        form.add_error("url", str(refusal))
        return form, None
    messages.success(request, "Webhook added. Copy its secret below: it is not shown again.")
    return WebhookForm(), created


def _once(response: HttpResponse) -> HttpResponse:
    # A new hook's secret is on this answer only, as a new token's is: no cache keeps it.
    response["Cache-Control"] = "no-store"
    return response


def _with_log(hooks) -> list:
    return [(hook, list(WebhookDelivery.objects.filter(webhook=hook)[:LOG])) for hook in hooks]


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def workspace_webhooks(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The workspace's own hooks: fired for every set of it, those an import makes later
    included. The same form, URL rules and service as a set's."""
    workspace = access.get_workspace_for_lead(request, slug)
    form, created = _form_and_added(request, workspace=workspace)
    ctx = {
        "workspace": workspace,
        "form": form,
        "created": created,
        "hooks": _with_log(workspace.webhooks.all()),
        "signature_header": SIGNATURE_HEADER,
    }
    return _once(
        access.render_page_or_partial(request, "audit/workspace_webhooks.html", "hooks", ctx)
    )


@login_required
@require_POST
def webhook_delete(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    webhook = access.get_webhook_for_lead(request, pk)
    back = _hooks_page(webhook)
    services.webhook_delete(webhook=webhook, user=request.user)
    messages.success(request, "Webhook removed.")
    return redirect(back)


def _hooks_page(webhook) -> str:
    if webhook.audit_set_id is not None:
        return reverse("audit:set-webhooks", args=[webhook.audit_set_id])
    return reverse("audit:workspace-webhooks", args=[webhook.workspace.slug])


# Deliveries per page of a hook's deliveries page.
DELIVERIES_PER_PAGE = 25


@login_required
@require_http_methods(["GET", "HEAD"])
def webhook_deliveries(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    webhook = access.get_webhook_for_lead(request, pk)
    services.webhooks_resume_stalled()
    page = Paginator(selectors.webhook_deliveries(webhook=webhook), DELIVERIES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    ctx = {"webhook": webhook, "hooks_page": _hooks_page(webhook), "page": page}
    return access.render_page_or_partial(
        request, "audit/webhook_deliveries.html", "deliveries", ctx
    )


@login_required
@require_POST
def webhook_redeliver(request: HtmxHttpRequest, pk: int, delivery: str) -> HttpResponse:
    webhook = access.get_webhook_for_lead(request, pk)
    found = WebhookDelivery.objects.filter(webhook=webhook, uuid=delivery).first()
    if found is None:
        raise Http404("No such delivery.")
    services.webhook_redeliver(delivery=found, user=request.user)
    messages.success(request, f"Delivery {found.uuid} queued to be sent again.")
    return redirect("audit:webhook-deliveries", webhook.pk)
