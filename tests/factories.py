"""factory_boy factories for the models the tests build by hand."""

from __future__ import annotations

import factory
from django.contrib.auth.models import Group, User

from audit.models import AuditSet


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests")

    @factory.post_generation
    def role(self, create: bool, extracted: str | None, **kwargs) -> None:
        if create:
            self.save()
        if create and extracted:
            self.groups.add(Group.objects.get(name=extracted))


class AuditSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AuditSet

    name = factory.Sequence(lambda n: f"Set {n}")
    guidelines = "Judge against the cited passages only."
