"""A lead's review pages for a set: progress per reviewer, the claims table, opening the set
for review and handing a departed reviewer's work to another."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from audit import selectors, services
from audit.filters import ClaimReviewFilter
from audit.forms import ReviewerReplaceForm, ReviewOpenForm
from audit.tables import ClaimReviewTable, LastPageLazyPaginator
from audit.views import access
from audit.views.access import HtmxHttpRequest

PER_PAGE = 50


@login_required
def set_progress(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    rows = selectors.reviewer_progress(audit_set=audit_set)
    assigned = sum(r.assigned for r in rows)
    submitted = sum(r.submitted for r in rows)
    counts = selectors.status_counts(audit_set=audit_set)
    return render(
        request,
        "audit/set_progress.html",
        {
            "audit_set": audit_set,
            "rows": rows,
            "assigned": assigned,
            "submitted": submitted,
            "percent": round(100 * submitted / assigned) if assigned else 0,
            "statuses": [
                (label, counts[code], code) for code, label in selectors.ClaimStatus.CHOICES
            ],
            "flags": selectors.set_flags(audit_set=audit_set, viewer=request.user)[:200],
            "skips": selectors.set_skips(audit_set=audit_set, viewer=request.user)[:200],
            "alerts": [
                row
                for row in selectors.set_calibration(audit_set=audit_set, viewer=request.user)
                if row.below
            ],
            "replace_form": ReviewerReplaceForm(audit_set=audit_set),
        },
    )


@login_required
def set_claims(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    filterset = ClaimReviewFilter(
        request.GET,
        queryset=selectors.claim_rows(audit_set=audit_set, viewer=request.user),
        audit_set=audit_set,
    )
    table = ClaimReviewTable(filterset.qs)
    # No COUNT(*) but for the last page: each page reads its rows and one more.
    paginate = {"per_page": PER_PAGE, "paginator_class": LastPageLazyPaginator}
    if request.GET.get("page") == "last":
        paginate["page"] = "last"  # RequestConfig passes on page numbers only
    RequestConfig(request, paginate=paginate).configure(table)
    return access.render_page_or_partial(
        request,
        "audit/set_claims.html",
        "results",
        {"audit_set": audit_set, "table": table, "filter": filterset},
    )


@require_POST
@login_required
def claims_mark_answering(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Mark every claim the claims list shows under its filters (all pages) as answering
    the question, or unmark them. The filters come back as the list's query string."""
    audit_set = access.get_set_for_lead(request, pk)
    query = QueryDict(request.POST.get("query", ""))
    filterset = ClaimReviewFilter(
        query,
        queryset=selectors.claim_rows(audit_set=audit_set, viewer=request.user),
        audit_set=audit_set,
    )
    if not filterset.is_valid():
        messages.error(request, "The list's filters could not be read; nothing was marked.")
        return redirect("audit:set-claims", pk=audit_set.pk)
    value = request.POST.get("value") == "1"
    ids = list(filterset.qs.filter(parent__isnull=True).values_list("pk", flat=True))
    changed = services.claims_mark_answering(audit_set=audit_set, claim_ids=ids, value=value)
    verb = "Marked" if value else "Unmarked"
    messages.success(
        request,
        f"{verb} {changed} claim{'s' if changed != 1 else ''} as answering the question "
        f"({len(ids) - changed} already were).",
    )
    return redirect(f"{reverse('audit:set-claims', args=[audit_set.pk])}?{query.urlencode()}")


@login_required
def review_open(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = ReviewOpenForm(
        request.POST or None,
        audit_set=audit_set,
        initial={
            "reviewers": audit_set.reviewers.all(),
            "overlap": audit_set.overlap,
            "allow_reviewer_split": audit_set.allow_reviewer_split,
        },
    )
    if request.method == "POST" and form.is_valid():
        try:
            summary = services.review_open(
                audit_set=audit_set,
                reviewers=list(form.cleaned_data["reviewers"]),
                overlap=form.cleaned_data["overlap"],
                by=request.user,
                allow_reviewer_split=form.cleaned_data["allow_reviewer_split"],
            )
        except services.ReviewError as error:
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                f"Review open: {summary.created} new assignments over {summary.claims} claims.",
            )
            return redirect("audit:set-progress", audit_set.pk)
    return render(request, "audit/review_open.html", {"audit_set": audit_set, "form": form})


@login_required
@require_POST
def reviewer_replace(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = ReviewerReplaceForm(request.POST, audit_set=audit_set)
    if form.is_valid():
        summary = services.reviewer_replace(
            audit_set=audit_set,
            leaving=form.cleaned_data["leaving"],
            joining=form.cleaned_data["joining"],
        )
        text = f"Moved {summary.moved} open claims; kept {summary.kept} submitted sheets."
        if summary.dropped:
            text += (
                f" {summary.dropped} claims already had the new reviewer and are one reviewer "
                "short: open the set for review again to fill them."
            )
        messages.success(request, text)
    else:
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    return redirect("audit:set-progress", audit_set.pk)
