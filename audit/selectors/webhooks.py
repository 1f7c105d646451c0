"""Reads of a webhook's deliveries, shared by its deliveries page and the API."""

from __future__ import annotations

from django.db.models import Count, Prefetch, QuerySet

from audit.models import Webhook, WebhookAttempt, WebhookDelivery


def webhook_deliveries(*, webhook: Webhook, attempts: bool = False) -> QuerySet[WebhookDelivery]:
    """A hook's deliveries, newest first, each with how many attempts it has had in all
    (`tries`, redeliveries included); with `attempts`, each attempt prefetched in order."""
    deliveries = WebhookDelivery.objects.filter(webhook=webhook).annotate(
        tries=Count("attempt_log")
    )
    if attempts:
        deliveries = deliveries.prefetch_related(
            Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("at", "pk"))
        )
    return deliveries.order_by("-created_at", "-pk")
