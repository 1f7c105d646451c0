"""Forms for workspaces: creating one, inviting a member, changing a member's role."""

from __future__ import annotations

from django import forms

from audit.models import Membership


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=100, label="New workspace")


class InvitationForm(forms.Form):
    email = forms.EmailField(label="Email")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.REVIEWER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices, label="Role")
