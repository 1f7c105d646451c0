from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from audit.api import api
from audit.views import (
    adjudication,
    agreement,
    answers,
    exports,
    jobs,
    progress,
    reports,
    review,
    sets,
    tokens,
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
    path("sets/<int:pk>/export/<str:fmt>/", exports.set_export, name="set-export"),
    path("sets/<int:pk>/report/", reports.set_report, name="set-report"),
    path("sets/<int:pk>/report/claims/", reports.set_report_claims, name="set-report-claims"),
    path("sets/<int:pk>/criteria/", reports.set_criteria, name="set-criteria"),
    path("sets/<int:pk>/compare/", reports.set_compare, name="set-compare"),
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
    path("tokens/", tokens.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token-revoke"),
]

urlpatterns = [
    path("", include((audit_patterns, "audit"))),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]

# 400 and 500 keep Django's handlers, which render templates/400.html and 500.html.
handler403 = "audit.views.errors.permission_denied"
handler404 = "audit.views.errors.page_not_found"
