from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    ClaimFact,
    CriteriaChange,
    GuidelineFlag,
    ImportBatch,
    PairFact,
    Passage,
    Question,
    Rater,
    RaterLabel,
    ReviewerTally,
    SheetFact,
)


@admin.register(AuditSet)
class AuditSetAdmin(admin.ModelAdmin):
    list_display = ["name", "created_by", "created_at"]
    search_fields = ["name"]
    filter_horizontal = ["reviewers"]


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


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "audit_set"]
    search_fields = ["external_id", "text"]
    list_select_related = ["audit_set"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "system", "audit_set", "is_partial"]
    list_filter = ["is_partial"]
    search_fields = ["external_id", "system"]
    list_select_related = ["audit_set"]
    raw_id_fields = ["question", "import_batch"]


@admin.register(Passage)
class PassageAdmin(admin.ModelAdmin):
    list_display = ["answer", "position", "title", "is_cited"]
    raw_id_fields = ["answer"]


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["answer", "order", "location", "is_uncited", "review_status"]
    list_filter = ["location", "is_uncited", "review_status"]
    raw_id_fields = ["answer", "parent", "citations"]
    # Derived and kept by the services: an edit here would disagree with the sheets.
    readonly_fields = ["review_status", "parent_order"]


@admin.register(ClaimCheck)
class ClaimCheckAdmin(admin.ModelAdmin):
    list_display = ["claim", "label", "best_score", "matcher_version"]
    list_filter = ["label", "matcher_version"]
    raw_id_fields = ["claim"]


@admin.register(Rater)
class RaterAdmin(admin.ModelAdmin):
    list_display = ["name", "kind"]


@admin.register(RaterLabel)
class RaterLabelAdmin(admin.ModelAdmin):
    list_display = ["rater", "claim", "judgment", "raw_label"]
    list_filter = ["rater", "judgment"]
    raw_id_fields = ["claim", "import_batch"]


@admin.register(AuditSheet)
class AuditSheetAdmin(SimpleHistoryAdmin):
    list_display = ["claim", "reviewer", "judgment", "status", "updated_at"]
    list_filter = ["status", "judgment"]
    raw_id_fields = ["claim", "wrong_citation_passage"]


@admin.register(Adjudication)
class AdjudicationAdmin(SimpleHistoryAdmin):
    list_display = ["claim", "judgment", "source", "lead", "updated_at"]
    list_filter = ["source", "judgment"]
    raw_id_fields = ["claim", "wrong_citation_passage", "from_sheet", "sheets"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["claim", "reviewer", "assigned_at"]
    list_select_related = ["reviewer"]
    raw_id_fields = ["claim"]


@admin.register(GuidelineFlag)
class GuidelineFlagAdmin(admin.ModelAdmin):
    list_display = ["audit_set", "claim", "raised_by", "created_at"]
    raw_id_fields = ["claim"]


@admin.register(CriteriaChange)
class CriteriaChangeAdmin(admin.ModelAdmin):
    list_display = ["audit_set", "by", "at"]


@admin.register(ReviewerTally)
class ReviewerTallyAdmin(admin.ModelAdmin):
    """Read-only: the services keep tallies (services.reviewer_tallies_refresh recounts)."""

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
