"""Every model of the app is in the Django admin, and each admin list page opens."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse


def _models():
    return [
        m
        for m in apps.get_app_config("audit").get_models()
        if not m.__name__.startswith("Historical")
    ]


def test_every_model_is_registered_in_admin():
    missing = [m.__name__ for m in _models() if not admin.site.is_registered(m)]

    assert missing == []


@pytest.mark.django_db
def test_admin_list_pages_open_for_a_superuser(admin_client):
    for model in _models():
        url = reverse(f"admin:audit_{model._meta.model_name}_changelist")

        assert admin_client.get(url).status_code == 200, url
