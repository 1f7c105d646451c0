"""Audit-set pages: the list, a set's answers and label distribution, creating and importing."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe
from django_tables2 import RequestConfig

from audit import selectors, services
from audit.distributions import flag_map, identical_groups
from audit.filters import AnswerFilter, AuditSetFilter
from audit.formats import FormatError
from audit.formats.reading import check_size
from audit.forms import AuditSetForm, ImportForm
from audit.models import Answer, ClaimCheck
from audit.roles import leads
from audit.tables import AnswerTable, AuditSetTable
from audit.views import access
from audit.views.access import HtmxHttpRequest

PER_PAGE = 50


@require_safe
@login_required
def set_list(request: HtmxHttpRequest) -> HttpResponse:
    rows = selectors.set_list_rows(user=request.user)
    filterset = AuditSetFilter(
        request.GET, queryset=rows, workspaces=selectors.set_list_workspaces(user=request.user)
    )
    table = AuditSetTable(filterset.qs)
    RequestConfig(request, paginate={"per_page": PER_PAGE}).configure(table)
    return access.render_page_or_partial(
        request, "audit/set_list.html", "results", {"table": table, "filter": filterset}
    )


@require_safe
@login_required
def set_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_user(request, pk)
    systems = list(
        Answer.objects.filter(audit_set=audit_set)
        .order_by("system")
        .values_list("system", flat=True)
        .distinct()
    )
    filterset = AnswerFilter(
        request.GET, queryset=selectors.answer_rows(audit_set=audit_set), systems=systems
    )
    table = AnswerTable(filterset.qs)
    RequestConfig(request, paginate={"per_page": PER_PAGE}).configure(table)
    return access.render_page_or_partial(
        request,
        "audit/set_detail.html",
        "results",
        {
            "audit_set": audit_set,
            "table": table,
            "filter": filterset,
            "imports": audit_set.imports.all()[:20],
            "exports_by_job": leads(request.user, audit_set)
            and not access.wants_partial(request)
            and selectors.set_answer_count(audit_set=audit_set) > settings.WEB_DIRECT_MAX_ANSWERS,
            # An htmx filter request swaps only the table: no need to compute the metrics.
            "release": (
                selectors.release_summary(audit_set=audit_set, viewer=request.user)
                if leads(request.user, audit_set) and not access.wants_partial(request)
                else None
            ),
        },
    )


@require_safe
@login_required
def label_distribution(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_user(request, pk)
    labels = list(ClaimCheck.Label)
    sections = []
    for by, title in (("system", "Per system"), ("import", "Per import")):
        rows = selectors.label_distribution(audit_set=audit_set, by=by)
        flags = flag_map(identical_groups({r.group: r.counts for r in rows}))
        sections.append(
            {
                "title": title,
                "rows": [
                    {
                        "group": r.group,
                        "total": r.total,
                        "cells": [
                            (label, r.counts.get(label.value, 0), round(100 * r.share(label), 1))
                            for label in labels
                        ],
                        "identical_to": flags.get(r.group, []),
                        "answers": r.answers,
                        "no_citation_verifies": (
                            r.no_citation_verifies,
                            round(100 * r.no_citation_verifies_share, 1),
                        ),
                    }
                    for r in rows
                ],
            }
        )
    return render(
        request,
        "audit/label_distribution.html",
        {"audit_set": audit_set, "labels": labels, "sections": sections},
    )


@login_required
def set_create(request: HtmxHttpRequest) -> HttpResponse:
    access.require_lead(request)
    form = AuditSetForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            audit_set = services.set_create(by=request.user, **form.cleaned_data)
        except services.SetNameTaken:
            form.add_error("name", "This workspace already has a set with this name.")
        except services.SetRefused as refusal:
            form.add_error(refusal.field, str(refusal))
        else:
            messages.success(request, f"Created set “{audit_set.name}”.")
            return redirect(audit_set)
    return render(request, "audit/set_form.html", {"form": form})


@login_required
def answers_upload(request: HtmxHttpRequest) -> HttpResponse:
    """Queue an uploaded answer file's import as a job and show the job's page.

    The import runs in a worker process (`manage.py db_worker`), not in this request, so a
    file of any number of answers fits; the job's page follows it and shows its errors.
    """
    access.require_lead(request)
    initial = {"audit_set": request.GET.get("set")} if request.GET.get("set") else None
    form = ImportForm(
        request.POST or None, request.FILES or None, initial=initial, user=request.user
    )
    ctx: dict = {
        "form": form,
        "max_bytes": settings.IMPORT_MAX_BYTES,
        "max_whole_bytes": settings.IMPORT_MAX_WHOLE_BYTES,
    }
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            # Refused here, at once: over this, nothing is worth queueing.
            check_size(upload.size, upload.name, settings.IMPORT_MAX_BYTES)
        except FormatError as error:
            ctx["error"] = str(error)
        else:
            job = services.job_import_create(
                upload=upload,
                audit_set=form.cleaned_data["audit_set"],
                new_set_name=form.cleaned_data["new_set_name"],
                workspace=form.cleaned_data["workspace"],
                fmt=form.cleaned_data["format"],
                user=request.user,
            )
            return redirect(job)
    status = 400 if "error" in ctx else 200
    return render(request, "audit/import.html", ctx, status=status)
