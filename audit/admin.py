from __future__ import annotations

from collections import defaultdict

from django.contrib import admin
from django.db.models import Model
from simple_history.admin import SimpleHistoryAdmin

from audit import services
from audit.models import (
    Adjudication,
    Answer,
    ApiToken,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ClaimComment,
    ClaimFact,
    ClaimSkip,
    ControlAssignment,
    ControlClaim,
    CriteriaChange,
    GuidelineFlag,
    GuidelineVersion,
    IdempotencyKey,
    ImportBatch,
    Invitation,
    Job,
    Judge,
    JudgeAcceptance,
    JudgeRun,
    JudgeThresholdChange,
    JudgeVerdict,
    JudgeVersion,
    Membership,
    PairFact,
    Passage,
    Question,
    Rater,
    RaterLabel,
    ReleaseFact,
    ReleaseTally,
    ReviewerPause,
    ReviewerTally,
    SheetFact,
    Suggestion,
    SuggestionSettingChange,
    SuggestionSource,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    Workspace,
)
from audit.services import judges as judges_services
from audit.services import workspaces as workspaces_services
from audit.services.release import release_tallies_rebuild


class DerivedStateAdmin(admin.ModelAdmin):
    """An edit in the admin refreshes what is derived from the claims it touched, as the
    services do (services.claims_changed), in the admin's own transaction: after the
    object and its many-to-many fields are saved, or after it is deleted. The claims and
    reviewers touched before the edit count too (a sheet moved to another reviewer)."""

    def _touched(self, obj: Model) -> list[tuple[int, int, int | None]]:
        """(set, claim, reviewer or None) for each claim the object bears on."""
        claim_id = getattr(obj, "claim_id", None)
        if claim_id is None:
            return []
        claim = Claim.objects.filter(pk=claim_id).values_list("answer__audit_set_id", "parent_id")
        reviewer_id = getattr(obj, "reviewer_id", None)
        rows = []
        for set_id, parent_id in claim:
            rows.append((set_id, claim_id, reviewer_id))
            if parent_id is not None:
                rows.append((set_id, parent_id, None))
        return rows

    def _refresh(self, rows: list[tuple[int, int, int | None]]) -> None:
        by_set: dict[int, tuple[set[int], set[int]]] = defaultdict(lambda: (set(), set()))
        for set_id, claim_id, reviewer_id in rows:
            by_set[set_id][0].add(claim_id)
            if reviewer_id is not None:
                by_set[set_id][1].add(reviewer_id)
        for set_id, (claim_ids, reviewer_ids) in sorted(by_set.items()):
            services.claims_changed(
                audit_set_id=set_id, claim_ids=claim_ids, reviewer_ids=reviewer_ids
            )

    def save_model(self, request, obj, form, change) -> None:
        before = type(obj).objects.filter(pk=obj.pk).first() if change else None
        self._before = self._touched(before) if before is not None else []
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        self._refresh([*getattr(self, "_before", []), *self._touched(form.instance)])

    def delete_model(self, request, obj) -> None:
        rows = self._touched(obj)
        super().delete_model(request, obj)
        self._refresh(rows)

    def delete_queryset(self, request, queryset) -> None:
        rows = [row for obj in queryset for row in self._touched(obj)]
        super().delete_queryset(request, queryset)
        self._refresh(rows)


class ClaimDerivedAdmin(DerivedStateAdmin):
    def _touched(self, obj: Model) -> list[tuple[int, int, int | None]]:
        rows = [
            (set_id, pk, reviewer_id)
            for set_id, pk, reviewer_id in Claim.objects.filter(pk=obj.pk).values_list(
                "answer__audit_set_id", "pk", "assignments__reviewer_id"
            )
        ]
        if obj.parent_id is not None:
            rows += [(set_id, obj.parent_id, None) for set_id, _pk, _r in rows[:1]]
        return rows


class AnswerDerivedAdmin(DerivedStateAdmin):
    def _touched(self, obj: Model) -> list[tuple[int, int, int | None]]:
        answer_id = obj.pk if isinstance(obj, Answer) else obj.answer_id
        return list(
            Claim.objects.filter(answer_id=answer_id).values_list(
                "answer__audit_set_id", "pk", "assignments__reviewer_id"
            )
        )


@admin.register(AuditSet)
class AuditSetAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "created_by", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["name"]
    filter_horizontal = ["reviewers"]

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # Settings (auto gold, threshold, overlap, criteria) decide derived rows set-wide.
        if change:
            services.set_changed(audit_set_id=form.instance.pk)

    # A deleted set's judges take their versions with them, but each version's rater is
    # protected by it and would stay behind, empty: forget those raters too.
    def delete_model(self, request, obj) -> None:
        raters = _judge_rater_ids(AuditSet.objects.filter(pk=obj.pk))
        super().delete_model(request, obj)
        judges_services.judge_raters_forget(rater_ids=raters)

    def delete_queryset(self, request, queryset) -> None:
        raters = _judge_rater_ids(queryset)
        super().delete_queryset(request, queryset)
        judges_services.judge_raters_forget(rater_ids=raters)


def _judge_rater_ids(sets) -> list[int]:
    return list(
        JudgeVersion.objects.filter(judge__audit_set__in=sets).values_list("rater_id", flat=True)
    )


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = [
        "filename",
        "format",
        "audit_set",
        "answers_created",
        "claims_created",
        "created_at",
    ]
    list_filter = ["format"]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    # Read-only: a job's row is written by its worker; the job's page cancels or reruns it.
    list_display = ["pk", "kind", "status", "audit_set", "created_by", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    readonly_fields = [f.name for f in Job._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(admin.ModelAdmin):
    # Read-only: a key is written by the push that named it and answers that push's retries.
    list_display = ["pk", "key", "user", "job", "created_at"]
    readonly_fields = [f.name for f in IdempotencyKey._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    # Added on the set's webhook page, which checks the URL; here they may be read or removed.
    list_display = ["pk", "audit_set", "url", "created_by", "created_at"]
    readonly_fields = [f.name for f in Webhook._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    # Read-only: a delivery's row is written by its attempts.
    list_display = ["pk", "webhook", "event", "status", "attempts", "response_code", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(WebhookAttempt)
class WebhookAttemptAdmin(admin.ModelAdmin):
    # Read-only: each row is one try of a delivery, written as it was sent.
    list_display = ["pk", "delivery", "at", "response_code", "redelivery"]
    readonly_fields = [f.name for f in WebhookAttempt._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(SuggestionSource)
class SuggestionSourceAdmin(admin.ModelAdmin):
    # Read-only: a source is made by its push, which checks every record against the set;
    # the set's Suggestions page removes one.
    list_display = ["pk", "audit_set", "name", "version", "created_by", "updated_at"]
    readonly_fields = [f.name for f in SuggestionSource._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Suggestion)
class SuggestionAdmin(admin.ModelAdmin):
    # Read-only, as its source.
    list_display = ["pk", "source", "claim", "judgment", "judgment_score"]
    list_select_related = ["source"]
    raw_id_fields = ["claim"]
    readonly_fields = [f.name for f in Suggestion._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(SuggestionSettingChange)
class SuggestionSettingChangeAdmin(admin.ModelAdmin):
    # Read-only: the record of a set's suggestion settings as the lead changed them.
    list_display = ["pk", "audit_set", "by", "at", "after_review_started"]
    readonly_fields = [f.name for f in SuggestionSettingChange._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    """Deleting a question deletes its answers and claims: the set's derived rows follow."""

    def delete_model(self, request, obj) -> None:
        super().delete_model(request, obj)
        services.set_changed(audit_set_id=obj.audit_set_id)

    def delete_queryset(self, request, queryset) -> None:
        set_ids = sorted(set(queryset.values_list("audit_set_id", flat=True)))
        super().delete_queryset(request, queryset)
        for set_id in set_ids:
            services.set_changed(audit_set_id=set_id)

    list_display = ["external_id", "audit_set"]
    search_fields = ["external_id", "text"]
    list_select_related = ["audit_set"]


@admin.register(Answer)
class AnswerAdmin(AnswerDerivedAdmin):
    list_display = ["external_id", "system", "audit_set", "is_partial", "no_citation_verifies"]
    list_filter = ["is_partial", "no_citation_verifies"]
    search_fields = ["external_id", "system"]
    list_select_related = ["audit_set"]
    raw_id_fields = ["question", "import_batch"]
    # Derived from the claims' checks by the services (services.claims_changed).
    readonly_fields = ["no_citation_verifies"]


@admin.register(Passage)
class PassageAdmin(AnswerDerivedAdmin):
    list_display = ["answer", "position", "title", "is_cited"]
    raw_id_fields = ["answer"]


@admin.register(Claim)
class ClaimAdmin(ClaimDerivedAdmin):
    list_display = ["answer", "order", "location", "is_uncited", "review_status"]
    list_filter = ["location", "is_uncited", "review_status"]
    raw_id_fields = ["answer", "parent", "citations"]
    # Derived and kept by the services: an edit here would disagree with the sheets.
    readonly_fields = ["review_status", "parent_order"]


@admin.register(ClaimCheck)
class ClaimCheckAdmin(DerivedStateAdmin):
    list_display = ["claim", "label", "best_score", "matcher_version"]
    list_filter = ["label", "matcher_version"]
    raw_id_fields = ["claim"]


@admin.register(Rater)
class RaterAdmin(admin.ModelAdmin):
    list_display = ["name", "kind"]


@admin.register(RaterLabel)
class RaterLabelAdmin(DerivedStateAdmin):
    list_display = ["rater", "claim", "judgment", "raw_label"]
    list_filter = ["rater", "judgment"]
    raw_id_fields = ["claim", "import_batch"]


@admin.register(AuditSheet)
class AuditSheetAdmin(DerivedStateAdmin, SimpleHistoryAdmin):
    list_display = ["claim", "reviewer", "judgment", "status", "updated_at"]
    list_filter = ["status", "judgment"]
    raw_id_fields = ["claim", "wrong_citation_passage"]


@admin.register(Adjudication)
class AdjudicationAdmin(DerivedStateAdmin, SimpleHistoryAdmin):
    list_display = ["claim", "judgment", "source", "lead", "updated_at"]
    list_filter = ["source", "judgment"]
    raw_id_fields = ["claim", "wrong_citation_passage", "from_sheet", "sheets"]


@admin.register(Assignment)
class AssignmentAdmin(DerivedStateAdmin):
    list_display = ["claim", "reviewer", "assigned_at"]
    list_select_related = ["reviewer"]
    raw_id_fields = ["claim"]


@admin.register(GuidelineFlag)
class GuidelineFlagAdmin(admin.ModelAdmin):
    list_display = ["audit_set", "claim", "raised_by", "created_at"]
    raw_id_fields = ["claim"]


@admin.register(CriteriaChange)
class CriteriaChangeAdmin(admin.ModelAdmin):
    list_display = ["audit_set", "version", "by", "at", "after_lock"]


@admin.register(ReviewerTally)
class ReviewerTallyAdmin(admin.ModelAdmin):
    """Read-only: services.claims_changed keeps tallies."""

    list_display = ["audit_set", "reviewer", "assigned", "submitted"]
    list_select_related = ["audit_set", "reviewer"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class FactAdmin(admin.ModelAdmin):
    """Agreement facts are derived by the review services: read them, never edit them."""

    raw_id_fields = ["claim"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SheetFact)
class SheetFactAdmin(FactAdmin):
    list_display = ["claim", "reviewer", "judgment", "kept", "chosen", "novel"]
    list_select_related = ["reviewer"]


@admin.register(PairFact)
class PairFactAdmin(FactAdmin):
    list_display = ["claim", "judgment_a", "judgment_b", "evidence_jaccard"]


@admin.register(ClaimFact)
class ClaimFactAdmin(FactAdmin):
    list_display = ["claim", "sheets", "profile", "evidence_jaccard"]


@admin.register(ReleaseFact)
class ReleaseFactAdmin(DerivedStateAdmin):
    """Written by services.claims_changed: read it. It can be deleted, with its claim or on
    its own, and deleting it on its own only has claims_changed write it again from the
    claim's current label."""

    list_display = ["claim", "system", "supported", "provisional", "contradicted"]
    raw_id_fields = ["claim"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReleaseTally)
class ReleaseTallyAdmin(admin.ModelAdmin):
    """Moved by services.claims_changed: read it. It goes with its set; deleting one on its
    own has the set's tallies counted again from its release facts."""

    list_display = ["audit_set", "system", "claims", "supported", "provisional"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def delete_model(self, request, obj) -> None:
        super().delete_model(request, obj)
        release_tallies_rebuild(audit_set_id=obj.audit_set_id)

    def delete_queryset(self, request, queryset) -> None:
        set_ids = sorted(set(queryset.values_list("audit_set_id", flat=True)))
        super().delete_queryset(request, queryset)
        for set_id in set_ids:
            release_tallies_rebuild(audit_set_id=set_id)


# Automatic judges run by the app (audit/services/judges.py); a key is never stored.


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "audit_set", "model", "base_url", "min_kappa", "min_gold"]


@admin.register(JudgeVersion)
class JudgeVersionAdmin(admin.ModelAdmin):
    list_display = ["judge", "number", "model", "temperature", "created_at"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "judge", "version", "subset", "system", "created_at"]
    raw_id_fields = ["job"]


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
    list_display = ["run", "claim", "judgment", "error", "attempts", "latency_ms"]
    raw_id_fields = ["claim"]


@admin.register(JudgeThresholdChange)
class JudgeThresholdChangeAdmin(admin.ModelAdmin):
    """A log: read it, never edit it."""

    list_display = ["judge", "by", "at", "after_lock"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(JudgeAcceptance)
class JudgeAcceptanceAdmin(admin.ModelAdmin):
    list_display = ["version", "by", "at", "kappa", "n_gold"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    raw_id_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]

    def save_formset(self, request, form, formset, change) -> None:
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        active = set(
            Membership.objects.filter(workspace=form.instance, is_active=True).values_list(
                "pk", flat=True
            )
        )
        super().save_formset(request, form, formset, change)
        _deactivated(
            Membership.objects.filter(pk__in=active, is_active=False).select_related("user")
        )


def _deactivated(memberships) -> None:
    """Memberships the admin just made inactive hand back their open assignments, as the
    members page's deactivation does (services.workspaces.member_deactivate)."""
    for membership in memberships:
        workspaces_services.member_assignments_return(membership=membership)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "is_active", "created_at"]
    list_filter = ["workspace", "role", "is_active"]
    search_fields = ["user__username"]
    raw_id_fields = ["user"]

    def save_model(self, request, obj, form, change) -> None:
        was_active = change and Membership.objects.filter(pk=obj.pk, is_active=True).exists()
        super().save_model(request, obj, form, change)
        if was_active and not obj.is_active:
            _deactivated([obj])


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    # The token exists only in the link sent; the admin sees its hash, never the link.
    list_display = ["email", "workspace", "role", "created_at", "expires_at", "accepted_at"]
    list_filter = ["workspace"]
    readonly_fields = ["token_hash", "accepted_at", "accepted_by", "invited_by"]


# Calibration: skips, guideline versions, controls, pauses and discussions, to look up.
admin.site.register([ClaimSkip, GuidelineVersion, ControlClaim, ControlAssignment, ReviewerPause])


@admin.register(ClaimComment)
class ClaimCommentAdmin(admin.ModelAdmin):
    list_display = ["claim", "author", "created_at"]
    raw_id_fields = ["claim"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    # Only the secret's hash is stored; the admin can revoke a token, never read one.
    list_display = ["name", "user", "prefix", "scope", "created_at", "expires_at", "revoked_at"]
    readonly_fields = ["prefix", "secret_hash", "last_used_at"]
