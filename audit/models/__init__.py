"""Citeaudit's data: audit sets of answers with their passages and claims, the reviewers'
audit sheets, the leads' adjudications, and the matcher's stored checks.

One module per area; every name is importable from audit.models as before."""

from audit.models.adjudication import Adjudication
from audit.models.calibration import (
    ClaimFact,
    ClaimSkip,
    ControlAssignment,
    ControlClaim,
    CriteriaChange,
    GuidelineVersion,
    PairFact,
    ReleaseFact,
    ReleaseFlagFields,
    ReleaseTally,
    ReviewerPause,
    SheetFact,
)
from audit.models.choices import Judgment, Severity
from audit.models.claims import QUEUE_ORDER, Claim, ClaimCheck, Rater, RaterLabel, ReviewStatus
from audit.models.jobs import IdempotencyKey, Job, Webhook, WebhookAttempt, WebhookDelivery
from audit.models.judges import (
    Judge,
    JudgeAcceptance,
    JudgeRun,
    JudgeThresholdChange,
    JudgeVerdict,
    JudgeVersion,
)
from audit.models.review import (
    Assignment,
    AuditSheet,
    ClaimComment,
    GuidelineFlag,
    JudgmentFields,
    ReviewerTally,
)
from audit.models.sets import Answer, AuditSet, ImportBatch, Passage, Question
from audit.models.suggestions import Suggestion, SuggestionSettingChange, SuggestionSource
from audit.models.workspaces import ApiToken, Invitation, Membership, Workspace

__all__ = [
    "Adjudication",
    "Answer",
    "ApiToken",
    "Assignment",
    "AuditSet",
    "AuditSheet",
    "Claim",
    "ClaimCheck",
    "ClaimComment",
    "ClaimFact",
    "ClaimSkip",
    "ControlAssignment",
    "ControlClaim",
    "CriteriaChange",
    "GuidelineFlag",
    "GuidelineVersion",
    "ImportBatch",
    "Invitation",
    "IdempotencyKey",
    "Job",
    "Judge",
    "JudgeAcceptance",
    "JudgeRun",
    "JudgeThresholdChange",
    "JudgeVerdict",
    "JudgeVersion",
    "Judgment",
    "JudgmentFields",
    "Membership",
    "PairFact",
    "Passage",
    "QUEUE_ORDER",
    "Question",
    "Rater",
    "RaterLabel",
    "ReleaseFact",
    "ReleaseFlagFields",
    "ReleaseTally",
    "ReviewStatus",
    "ReviewerPause",
    "ReviewerTally",
    "Severity",
    "SheetFact",
    "Suggestion",
    "SuggestionSettingChange",
    "SuggestionSource",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "Workspace",
]
