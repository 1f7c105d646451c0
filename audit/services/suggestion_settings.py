"""A set's suggestion settings: which source pre-highlights the review page, whether a
suggested judgment is shown, and the share of claims suggestions are withheld from.

The page, the API and any command call `set_suggestion_settings`, so every door checks the
same rules and records the change alike."""

from __future__ import annotations

import math
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from audit.models import AuditSet, SuggestionSettingChange
from audit.roles import leads
from audit.selectors import criteria_locked_since
from audit.selectors.suggestions import source_info
from audit.services.sets import SetRefused
from audit.suggestions import SourceKey

MAX_WITHHOLD_SHARE = 0.9


def _current(audit_set: AuditSet) -> dict:
    return {
        "suggestion_source": audit_set.suggestion_source,
        "show_suggested_judgment": audit_set.show_suggested_judgment,
        "withhold_share": audit_set.withhold_share,
    }


def source_gone(*, current: AuditSet, user: AbstractBaseUser, key: str) -> None:
    """A pushed source is being deleted: a set that pre-highlights with it goes back to the
    matcher, recorded as any change is, so no review page asks for a source that is gone.
    Called under the set's row lock (`current` was read with select_for_update)."""
    if current.suggestion_source != key:
        return
    before = _current(current)
    current.suggestion_source = "matcher"
    current.save(update_fields=["suggestion_source"])
    SuggestionSettingChange.objects.create(
        audit_set=current,
        by=user,
        before=before,
        after=_current(current),
        after_review_started=criteria_locked_since(audit_set=current) is not None,
    )


def set_suggestion_settings(
    *,
    audit_set: AuditSet,
    user: AbstractBaseUser,
    source_key: str,
    show_judgment: bool,
    withhold_share: float,
) -> SuggestionSettingChange | None:
    """Choose the set's suggestion source, whether its suggested judgment is shown, and the
    share of claims withheld from suggestions; returns the recorded change (None when
    nothing changed).

    Only a lead of the set (PermissionDenied). The source must be one of the set's
    (SetRefused on "source_key"); the share is a number from 0 to 0.9 and may only be set or
    changed before review starts, with a fresh seed each time it is chosen (SetRefused on
    "withhold_share"). The source and the shown judgment may change at any time; every
    change is recorded with who made it and whether review had started.
    """
    if not leads(user, audit_set):
        raise PermissionDenied("Only a lead can change a set's suggestion settings.")
    key = SourceKey.parse(source_key)
    if key is None:
        raise SetRefused(
            "source_key",
            f"“{source_key}” is not a source: use matcher, judge-run:<id> or source:<id>.",
        )
    if source_info(audit_set, key) is None:
        raise SetRefused("source_key", f"This set has no source “{key}”.")
    if isinstance(withhold_share, bool) or not isinstance(withhold_share, int | float):
        raise SetRefused("withhold_share", "The withheld share is a number from 0 to 0.9.")
    share = float(withhold_share)
    if not math.isfinite(share) or not 0.0 <= share <= MAX_WITHHOLD_SHARE:
        raise SetRefused("withhold_share", "The withheld share is a number from 0 to 0.9.")
    with transaction.atomic():
        # Read under the row lock: two leads saving at once must not both pass the rule.
        current = AuditSet.objects.select_for_update().get(pk=audit_set.pk)
        # Review started as for criteria: at the set's first submitted sheet.
        started = criteria_locked_since(audit_set=current)
        before = _current(current)
        fields = []
        if share != current.withhold_share:
            if started is not None:
                raise SetRefused(
                    "withhold_share",
                    f"Review started {started:%Y-%m-%d %H:%M} UTC: the share of claims "
                    "without suggestions was fixed then and can no longer change, or the "
                    "comparison with and without suggestions would not hold.",
                )
            current.withhold_share = share
            # A new draw for a new share: the seed is recorded so the draw can be replayed.
            current.withhold_seed = secrets.token_hex(16) if share > 0 else ""
            current.withhold_chosen_at = timezone.now()
            fields += ["withhold_share", "withhold_seed", "withhold_chosen_at"]
        if str(key) != current.suggestion_source:
            current.suggestion_source = str(key)
            fields.append("suggestion_source")
        if bool(show_judgment) != current.show_suggested_judgment:
            current.show_suggested_judgment = bool(show_judgment)
            fields.append("show_suggested_judgment")
        if not fields:
            return None
        current.save(update_fields=fields)
        change = SuggestionSettingChange.objects.create(
            audit_set=current,
            by=user,
            before=before,
            after=_current(current),
            after_review_started=started is not None,
        )
    for field in fields:
        setattr(audit_set, field, getattr(current, field))
    return change
