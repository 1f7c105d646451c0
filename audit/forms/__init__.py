"""Forms, one module per area: sets and uploads, the review, adjudication, results
(dashboard filters, verdicts, criteria, comparing runs), judges and webhooks, workspaces."""

from audit.forms.adjudication import AdjudicationForm, AdjudicationSettingsForm
from audit.forms.judges import (
    JUDGE_ENV_NAME,
    JudgeForm,
    JudgeRunForm,
    JudgeThresholdForm,
    WebhookForm,
)
from audit.forms.reports import (
    CompareForm,
    CriteriaForm,
    DashboardFilterForm,
    SuggestionUploadForm,
    VerdictUploadForm,
)
from audit.forms.review import (
    AssertionField,
    ClaimSplitForm,
    CommentForm,
    ControlSettingsForm,
    EvidenceField,
    FlagForm,
    JudgmentForm,
    ReviewerReplaceForm,
    ReviewOpenForm,
    SheetForm,
    SkipForm,
)
from audit.forms.sets import (
    FORMATS,
    AuditSetEditForm,
    AuditSetForm,
    ImportForm,
    SuggestionSettingsForm,
    WorkspaceChoiceField,
)
from audit.forms.workspaces import InvitationForm, MemberRoleForm, WorkspaceForm

__all__ = [
    "AdjudicationForm",
    "AdjudicationSettingsForm",
    "AssertionField",
    "AuditSetEditForm",
    "SuggestionSettingsForm",
    "AuditSetForm",
    "ClaimSplitForm",
    "CommentForm",
    "CompareForm",
    "ControlSettingsForm",
    "CriteriaForm",
    "DashboardFilterForm",
    "EvidenceField",
    "FORMATS",
    "FlagForm",
    "ImportForm",
    "InvitationForm",
    "JUDGE_ENV_NAME",
    "JudgeForm",
    "JudgeRunForm",
    "JudgeThresholdForm",
    "JudgmentForm",
    "MemberRoleForm",
    "ReviewOpenForm",
    "ReviewerReplaceForm",
    "SheetForm",
    "SkipForm",
    "SuggestionUploadForm",
    "VerdictUploadForm",
    "WebhookForm",
    "WorkspaceChoiceField",
    "WorkspaceForm",
]
