from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from audit.api import api
from audit.views import (
    accounts,
    adjudication,
    agreement,
    answers,
    calibration,
    exports,
    jobs,
    judges,
    progress,
    reports,
    review,
    sets,
    suggestion_report,
    tokens,
    webhooks,
    workspaces,
)

audit_patterns = [
    path("", review.home, name="home"),
    path("sets/", sets.set_list, name="set-list"),
    path("sets/new/", sets.set_create, name="set-create"),
    path("sets/<int:pk>/", sets.set_detail, name="set-detail"),
    path("sets/<int:pk>/labels/", sets.label_distribution, name="label-distribution"),
    path("sets/<int:pk>/continue/", review.review_continue, name="review-continue"),
    path("sets/<int:pk>/progress/", progress.set_progress, name="set-progress"),
    path("sets/<int:pk>/claims/", progress.set_claims, name="set-claims"),
    path(
        "sets/<int:pk>/claims/answering/",
        progress.claims_mark_answering,
        name="claims-mark-answering",
    ),
    path("sets/<int:pk>/review/open/", progress.review_open, name="review-open"),
    path("sets/<int:pk>/review/replace/", progress.reviewer_replace, name="reviewer-replace"),
    path(
        "sets/<int:pk>/adjudication/",
        adjudication.adjudication_queue,
        name="adjudication-queue",
    ),
    path(
        "sets/<int:pk>/adjudication/settings/",
        adjudication.adjudication_settings,
        name="adjudication-settings",
    ),
    path("sets/<int:pk>/agreement/", agreement.agreement, name="agreement"),
    path("sets/<int:pk>/agreement/claims/", agreement.agreement_claims, name="agreement-claims"),
    path("sets/<int:pk>/verdicts/", agreement.verdicts_upload, name="verdicts-upload"),
    path(
        "sets/<int:pk>/suggestions/upload/",
        agreement.suggestions_upload,
        name="suggestions-upload",
    ),
    path("sets/<int:pk>/export/<str:fmt>/", exports.set_export, name="set-export"),
    path("sets/<int:pk>/report/", reports.set_report, name="set-report"),
    path("sets/<int:pk>/report/claims/", reports.set_report_claims, name="set-report-claims"),
    path("sets/<int:pk>/criteria/", reports.set_criteria, name="set-criteria"),
    path("sets/<int:pk>/compare/", reports.set_compare, name="set-compare"),
    path(
        "sets/<int:pk>/suggestions/compare/",
        suggestion_report.suggestion_comparison,
        name="suggestion-comparison",
    ),
    path("import/", sets.answers_upload, name="import"),
    path("jobs/", jobs.job_list, name="job-list"),
    path("jobs/<int:pk>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:pk>/cancel/", jobs.job_cancel, name="job-cancel"),
    path("jobs/<int:pk>/retry/", jobs.job_retry, name="job-retry"),
    path("answers/<int:pk>/", answers.answer_detail, name="answer-detail"),
    path("claims/<int:pk>/review/", review.review_claim, name="review-claim"),
    path("claims/<int:pk>/review/save/", review.review_save, name="review-save"),
    path("claims/<int:pk>/review/submit/", review.review_submit, name="review-submit"),
    path("claims/<int:pk>/review/reopen/", review.review_reopen, name="review-reopen"),
    path("claims/<int:pk>/flag/", review.flag_raise, name="flag-raise"),
    path("claims/<int:pk>/split/", review.claim_split, name="claim-split"),
    path("claims/<int:pk>/adjudicate/", adjudication.adjudicate, name="adjudicate"),
    path("claims/<int:pk>/adjudicate/save/", adjudication.adjudicate_save, name="adjudicate-save"),
    path("claims/<int:pk>/history/", adjudication.claim_history, name="claim-history"),
    path("sets/<int:pk>/judges/", judges.judge_list, name="judge-list"),
    path("judges/<int:pk>/", judges.judge_detail, name="judge-detail"),
    path("judges/<int:pk>/threshold/", judges.judge_threshold, name="judge-threshold"),
    path("judges/<int:pk>/run/", judges.judge_run, name="judge-run"),
    path("judges/<int:pk>/calibration/", judges.judge_calibration, name="judge-calibration"),
    path("judges/<int:pk>/accept/", judges.judge_accept, name="judge-accept"),
    path("judge-runs/<int:pk>/", judges.judge_run_detail, name="judge-run-detail"),
    path("judge-runs/<int:pk>/resume/", judges.judge_run_resume, name="judge-run-resume"),
    path("jobs/<int:pk>/download/", jobs.job_download, name="job-download"),
    path("sets/<int:pk>/rematch/", adjudication.set_rematch, name="set-rematch"),
    path("sets/<int:pk>/webhooks/", webhooks.set_webhooks, name="set-webhooks"),
    path(
        "workspaces/<slug:slug>/webhooks/",
        webhooks.workspace_webhooks,
        name="workspace-webhooks",
    ),
    path("webhooks/<int:pk>/delete/", webhooks.webhook_delete, name="webhook-delete"),
    path("webhooks/<int:pk>/deliveries/", webhooks.webhook_deliveries, name="webhook-deliveries"),
    path(
        "webhooks/<int:pk>/deliveries/<uuid:delivery>/redeliver/",
        webhooks.webhook_redeliver,
        name="webhook-redeliver",
    ),
    path("claims/<int:pk>/review/skip/", review.review_skip, name="review-skip"),
    path("feedback/", calibration.my_feedback, name="my-feedback"),
    path("sets/<int:pk>/edit/", calibration.set_edit, name="set-edit"),
    path("sets/<int:pk>/guidelines/", calibration.guideline_history, name="guideline-history"),
    path("sets/<int:pk>/calibration/", calibration.set_calibration, name="set-calibration"),
    path("sets/<int:pk>/calibration/pause/", calibration.reviewer_pause, name="reviewer-pause"),
    path("claims/<int:pk>/comments/", calibration.comment_create, name="comment-create"),
    path("sets/<int:pk>/flags/", calibration.flag_settle, name="flag-settle"),
    path("workspaces/", workspaces.workspace_list, name="workspace-list"),
    path(
        "workspaces/<slug:slug>/members/",
        workspaces.workspace_members,
        name="workspace-members",
    ),
    path(
        "workspaces/<slug:slug>/members/<int:pk>/",
        workspaces.member_update,
        name="member-update",
    ),
    path(
        "workspaces/<slug:slug>/invitations/<int:pk>/revoke/",
        workspaces.invitation_revoke,
        name="invitation-revoke",
    ),
    path("invitations/<str:token>/", workspaces.invitation_accept, name="invitation-accept"),
    path("tokens/", tokens.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token-revoke"),
]

urlpatterns = [
    path("", include((audit_patterns, "audit"))),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("password/reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path(
        "password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]

if settings.OIDC_ENABLED:
    urlpatterns.append(path("accounts/", include("allauth.urls")))

# 400 keeps Django's handler, which renders templates/400.html; 500 is Django's unless the
# database failed (503).
handler500 = "audit.views.errors.server_error"
handler403 = "audit.views.errors.permission_denied"
handler404 = "audit.views.errors.page_not_found"
