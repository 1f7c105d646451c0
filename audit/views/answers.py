"""The answer page: the answer with its claims marked, each claim's checks, and the passages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from audit import evidence, matching, selectors
from audit.models import AuditSheet, Claim
from audit.roles import leads
from audit.views import access, display


@require_safe
@login_required
def answer_detail(request: HttpRequest, pk: int) -> HttpResponse:
    answer = access.get_answer_for_user(request, pk)
    passages = list(answer.passages.order_by("position"))
    by_pk = {p.pk: p for p in passages}
    claims = list(
        Claim.objects.filter(answer=answer, parent__isnull=True)
        .select_related("machine_check")
        .prefetch_related("citations")
        .order_by("order")
    )
    highlights: dict[int, list[tuple[int, int, int]]] = {}
    rows = []
    for claim in claims:
        check = getattr(claim, "machine_check", None)
        cited = sorted(by_pk[p.pk].position for p in claim.citations.all())
        if check and check.highlights:
            top = check.highlights[0]
            highlights.setdefault(top["passage"], []).append(
                (top["start"], top["end"], claim.order)
            )
        rows.append(
            {
                "claim": claim,
                "check": check,
                "cited": cited,
                "stale": check is not None and check.matcher_version != matching.MATCHER_VERSION,
                "quotes": [
                    {
                        "passage": h["passage"],
                        "text": display.excerpt(
                            passages[h["passage"] - 1].text, h["start"], h["end"]
                        ),
                    }
                    for h in (check.highlights if check else [])
                ],
                "wrong": (
                    {
                        "passage": check.wrong_citation["passage"],
                        "text": display.excerpt(
                            passages[check.wrong_citation["passage"] - 1].text,
                            check.wrong_citation["start"],
                            check.wrong_citation["end"],
                        ),
                    }
                    if check and check.wrong_citation
                    else None
                ),
            }
        )
    spans = []
    for number, claim in enumerate(claims, start=1):
        spans.extend(evidence.answer_quote_spans(number, claim.text))
    if leads(request.user, answer.audit_set):
        # Reviewers' evidence is shown to leads only: a reviewer must not see another's sheet.
        numbers = {c.pk: n for n, c in enumerate(claims, start=1)}
        sheets = selectors.visible_sheets(
            AuditSheet.objects.filter(claim__in=claims), user=request.user
        ).select_related("reviewer")
        for sheet in sheets.order_by("claim__order", "reviewer__username"):
            spans.extend(
                evidence.EvidenceSpan(
                    claim=numbers[sheet.claim_id],
                    source=sheet.reviewer.get_username(),
                    kind=evidence.VERBATIM,
                    text=item.get("text", ""),
                    passage=item.get("passage"),
                )
                for item in sheet.evidence
            )
    evidence_rows = evidence.verify_spans(
        spans,
        {p.position: p.text for p in passages},
        {n: row["cited"] for n, row in enumerate(rows, start=1)},
    )
    pieces = display.answer_pieces(answer, claims)
    for piece in pieces:
        piece.links = display.marker_links(piece.marker_numbers, len(passages))
    return render(
        request,
        "audit/answer_detail.html",
        {
            "answer": answer,
            "audit_set": answer.audit_set,
            "pieces": pieces,
            "rows": rows,
            "passages": display.passage_views(passages, highlights),
            "evidence_rows": evidence_rows,
            "unknown_markers": sorted({n for c in claims for n in c.cited_unknown}),
            "replaces": selectors.answer_versions_replaced(answer=answer),
        },
    )
