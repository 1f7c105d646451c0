"""Who may act is a rule of the service, not of the page in front of it: a door that calls a
judge's or a webhook's service for someone who does not lead the set is refused there, and
nothing is written."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from audit import services
from audit.models import Judge, JudgeVersion, Webhook
from audit.services import judges

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback")]

FIELDS = {
    "name": "house",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "fake-1",
    "max_concurrency": 2,
    "timeout_seconds": 5.0,
    "min_kappa": 0.0,
    "min_gold": 3,
}


@pytest.fixture
def judge(handmade, lead):
    return judges.judge_create(audit_set=handmade, fields=dict(FIELDS), user=lead)


def test_a_reviewer_cannot_create_a_judge_through_the_service(handmade, reviewer_a):
    with pytest.raises(PermissionDenied):
        judges.judge_create(audit_set=handmade, fields=dict(FIELDS), user=reviewer_a)
    assert not Judge.objects.exists()


@pytest.mark.parametrize(
    "act",
    [
        lambda judge, user: judges.judge_update(
            judge=judge, fields={"model": "other"}, template="", user=user
        ),
        lambda judge, user: judges.judge_threshold_set(
            judge=judge, min_kappa=0.5, min_gold=3, user=user
        ),
        lambda judge, user: judges.judge_run_start(judge=judge, subset="all", user=user),
        lambda judge, user: judges.judge_accept(
            version=judges.judge_current_version(judge), user=user
        ),
    ],
    ids=["update", "threshold", "run", "accept"],
)
def test_a_reviewer_cannot_change_or_run_a_judge_through_the_service(judge, reviewer_a, act):
    before = (JudgeVersion.objects.count(), judge.runs.count(), Judge.objects.get().min_kappa)
    with pytest.raises(PermissionDenied):
        act(judge, reviewer_a)
    assert (JudgeVersion.objects.count(), judge.runs.count(), Judge.objects.get().min_kappa) == (
        before
    )


def test_a_reviewer_cannot_add_or_remove_a_webhook_through_the_service(
    handmade, lead, reviewer_a, settings
):
    settings.EGRESS_ALLOW = ["127.0.0.1"]
    with pytest.raises(PermissionDenied):
        services.webhook_create(
            audit_set=handmade,
            url="http://127.0.0.1:9/hook",
            events=["set.reviewed"],
            user=reviewer_a,
        )
    assert not Webhook.objects.exists()
    webhook = services.webhook_create(
        audit_set=handmade, url="http://127.0.0.1:9/hook", events=["set.reviewed"], user=lead
    )
    with pytest.raises(PermissionDenied):
        services.webhook_delete(webhook=webhook, user=reviewer_a)
    assert Webhook.objects.filter(pk=webhook.pk).exists()
