"""Writes, by area: importing answer sets (`imports`), restoring a citeaudit export
(`restore`), the matcher's checks (`checks`), a set's creation and settings (`sets`), review
(`assignment`, `sheets`, `splits`, and what a judgment needs to be final, `validation`),
acceptance criteria (`criteria`), adjudication (`adjudication`), machine verdicts
(`verdicts`). Rows derived from claims (severity and unanimous gold, statuses, tallies,
agreement and release facts) are written by `claims_changed` (`derived`) alone, and only it
is exported here."""

from audit.claims import plan_claims
from audit.judgments import EvidenceRef
from audit.services.adjudication import (
    GoldData,
    StaleAdjudication,
    adjudication_save,
    adjudication_saved_as,
    adjudication_settings_update,
)
from audit.services.assignment import OpenSummary, ReplaceSummary, review_open, reviewer_replace
from audit.services.calibration import (
    ControlSettingRefused,
    claim_skip,
    control_settings_update,
    controls_assign,
    controls_mark,
    reviewer_pause,
)
from audit.services.checks import claim_checks_recompute
from audit.services.criteria import claims_mark_answering, criteria_update
from audit.services.derived import claims_changed, decisions_watched, set_changed
from audit.services.disagreements import CompareSummary
from audit.services.discussion import (
    comment_post,
    flag_discuss,
    flag_settle,
    guideline_flag_raise,
)
from audit.services.guidelines import guideline_version_current, set_update
from audit.services.imports import ImportSummary, answer_content_hash, answers_import
from audit.services.jobs import (
    IdempotencyConflict,
    JobCancelled,
    JobRefused,
    job_cancel,
    job_export_create,
    job_import_create,
    job_recompare_create,
    job_rematch_create,
    job_retry,
    job_run,
    job_verdicts_create,
    jobs_reap_stale,
)
from audit.services.sets import (
    SetNameTaken,
    SetRefused,
    SettingsChange,
    adjudication_settings_apply,
    set_create,
    set_settings_update,
)
from audit.services.sheets import (
    PAUSED,
    SheetData,
    StaleSheet,
    sheet_for,
    sheet_has_work,
    sheet_reopen,
    sheet_save,
    sheet_submit,
    sheet_submitted_as,
)
from audit.services.splits import AtomicPart, claim_split
from audit.services.suggestions import (
    SourceInUse,
    SuggestionPushSummary,
    source_delete,
    suggestions_push,
    suggestions_upload,
)
from audit.services.tokens import (
    TokenRejected,
    TokenScopeRefused,
    token_authenticate,
    token_create,
    token_revoke,
)
from audit.services.validation import ReviewError, SheetIncomplete
from audit.services.verdicts import VerdictImportSummary, verdicts_import, verdicts_push
from audit.services.webhooks import (
    WebhookRefused,
    webhook_create,
    webhook_delete,
    webhook_redeliver,
    webhooks_fire,
    webhooks_resume_stalled,
)

__all__ = [
    "AtomicPart",
    "CompareSummary",
    "EvidenceRef",
    "GoldData",
    "ImportSummary",
    "JobCancelled",
    "IdempotencyConflict",
    "JobRefused",
    "OpenSummary",
    "PAUSED",
    "ReplaceSummary",
    "ReviewError",
    "ControlSettingRefused",
    "SheetData",
    "SheetIncomplete",
    "StaleAdjudication",
    "StaleSheet",
    "VerdictImportSummary",
    "WebhookRefused",
    "SetNameTaken",
    "SetRefused",
    "SettingsChange",
    "adjudication_save",
    "adjudication_saved_as",
    "adjudication_settings_apply",
    "adjudication_settings_update",
    "answer_content_hash",
    "answers_import",
    "claim_checks_recompute",
    "claim_skip",
    "control_settings_update",
    "controls_assign",
    "controls_mark",
    "reviewer_pause",
    "claim_split",
    "claims_changed",
    "decisions_watched",
    "claims_mark_answering",
    "comment_post",
    "criteria_update",
    "flag_discuss",
    "flag_settle",
    "guideline_flag_raise",
    "guideline_version_current",
    "job_cancel",
    "job_export_create",
    "job_import_create",
    "job_recompare_create",
    "job_rematch_create",
    "job_retry",
    "job_run",
    "job_verdicts_create",
    "jobs_reap_stale",
    "plan_claims",
    "review_open",
    "reviewer_replace",
    "set_changed",
    "set_create",
    "set_settings_update",
    "set_update",
    "sheet_for",
    "sheet_has_work",
    "sheet_reopen",
    "sheet_save",
    "sheet_submit",
    "sheet_submitted_as",
    "verdicts_import",
    "verdicts_push",
    "SuggestionPushSummary",
    "SourceInUse",
    "source_delete",
    "suggestions_push",
    "suggestions_upload",
    "webhook_create",
    "webhook_delete",
    "webhook_redeliver",
    "webhooks_fire",
    "webhooks_resume_stalled",
    "TokenRejected",
    "TokenScopeRefused",
    "token_authenticate",
    "token_create",
    "token_revoke",
]
