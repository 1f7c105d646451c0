"""The reviewer's side of blind double review: their home, the review page with its autosave,
submit and reopen, guideline flags, and splitting a claim into atomic facts."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from audit import judgments, matching, selectors, services, unsupported
from audit.forms import ClaimSplitForm, FlagForm, SheetForm, SkipForm
from audit.models import AuditSheet, Claim, ClaimSkip, GuidelineFlag
from audit.roles import is_lead
from audit.selectors.review_suggestions import review_suggestion
from audit.views import access, calibration, display, held
from audit.views.access import HtmxHttpRequest

TAB_ID = re.compile(r"[A-Za-z0-9-]{8,40}")
OPENED_SALT = "audit.review-opened"
OPENED_MAX_AGE = 24 * 3600


@login_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    lead = is_lead(request.user)
    return render(
        request,
        "audit/home.html",
        {
            "my_sets": [
                (
                    row,
                    selectors.queue_state(
                        paused=row.paused,
                        opened=row.review_opened_at is not None,
                        assigned=row.assigned,
                        done=row.done,
                    ),
                )
                for row in selectors.reviewer_set_rows(user=request.user)
            ],
            "lead_sets": list(selectors.lead_set_rows(user=request.user)) if lead else None,
            "split_after_judging": list(selectors.split_after_judging(user=request.user)[:50]),
        },
    )


@login_required
def review_continue(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_user(request, pk)
    claim_id = selectors.next_claim_id(reviewer=request.user, audit_set=audit_set)
    if claim_id is None and selectors.is_paused(reviewer=request.user, audit_set=audit_set):
        messages.info(request, services.PAUSED)
        return redirect("audit:home")
    if claim_id is None:
        messages.info(request, f"Nothing left to review in “{audit_set.name}”.")
        return redirect("audit:home")
    return redirect("audit:review-claim", claim_id)


# Never from the browser's cache: Back must show the sheet as stored, with its current
# version, or the next save from that page would be refused as changed elsewhere.
@never_cache
@login_required
def review_claim(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = selectors.assigned_claim(user=request.user, pk=pk)
    if claim is None:
        return _split_notice(request, pk)
    sheet = selectors.reviewer_sheet(claim=claim, reviewer=request.user)
    return _render_review(request, claim, sheet)


def _split_notice(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """A split claim's old address: where its parts are, and that the user's sheet is kept."""
    claim = selectors.split_claim_for_reviewer(user=request.user, pk=pk)
    if claim is None:
        raise Http404("No such claim in your review queue.")
    own = AuditSheet.objects.filter(claim=claim, reviewer=request.user).first()
    submitted = set(
        AuditSheet.objects.filter(
            claim__parent=claim, reviewer=request.user, status=AuditSheet.Status.SUBMITTED
        ).values_list("claim_id", flat=True)
    )
    parts = [
        {"claim": part, "submitted": part.pk in submitted}
        for part in claim.atomic_claims.filter(assignments__reviewer=request.user).order_by("order")
    ]
    return render(
        request,
        "audit/claim_was_split.html",
        {
            "claim": claim,
            "audit_set": claim.answer.audit_set,
            "count": claim.atomic_claims.count(),
            "own": own if own is not None and services.sheet_has_work(own) else None,
            "own_judgment": judgments.JUDGMENT_LABELS.get(own.judgment, "") if own else "",
            "parts": parts,
        },
    )


@login_required
@require_POST
def review_save(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_reviewer(request, pk)
    sheet = selectors.reviewer_sheet(claim=claim, reviewer=request.user)
    form = SheetForm(request.POST, passage_positions=_positions(claim))
    posted_version = _posted_version(request, sheet)
    if not form.is_valid():
        return _save_failed(request, claim, sheet, form, _form_errors(form), 400, posted_version)
    tab, seq = _posted_tab(request)
    try:
        sheet = services.sheet_save(
            sheet=sheet,
            user=request.user,
            version=form.cleaned_data["version"],
            data=form.sheet_data(),
            active_seconds=form.cleaned_data["active_seconds"] or 0,
            tab=tab,
            seq=seq,
            opened_at=_posted_opened(request, claim),
        )
    except services.StaleSheet as stale:
        return _save_failed(request, claim, sheet, form, [str(stale)], 409, posted_version)
    except services.ReviewError as error:
        return _save_failed(request, claim, sheet, form, [str(error)], 400, posted_version)
    if access.wants_partial(request):
        return render(
            request,
            "audit/review.html#save-status",
            {"save_state": "saved", "version": sheet.version, "sheet": sheet},
        )
    messages.success(request, "Draft saved.")
    return redirect("audit:review-claim", claim.pk)


@login_required
@require_POST
def review_submit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_reviewer(request, pk)
    form = SheetForm(request.POST, passage_positions=_positions(claim))
    if not form.is_valid():
        sheet = selectors.reviewer_sheet(claim=claim, reviewer=request.user)
        return _render_review(request, claim, sheet, form=form, problems=_form_errors(form))
    sheet = services.sheet_for(claim=claim, reviewer=request.user)
    try:
        sheet = services.sheet_submit(
            sheet=sheet,
            user=request.user,
            version=form.cleaned_data["version"],
            data=form.sheet_data(),
            active_seconds=form.cleaned_data["active_seconds"] or 0,
        )
    except services.SheetIncomplete as incomplete:
        kept = _keep_as_draft(request, sheet, form)
        if kept is None:
            return _render_review(request, claim, sheet, form=form, problems=incomplete.problems)
        return _render_review(request, claim, kept, problems=incomplete.problems)
    except services.ReviewError as error:
        # The same submit sent again after its answer was lost (the connection dropped) is
        # done: the reviewer goes on as if the first answer had arrived.
        if not _submitted_as_posted(claim, request, form):
            stale = isinstance(error, services.StaleSheet)
            return _render_review(
                request,
                claim,
                sheet,
                form=form,
                problems=[str(error)],
                stale=stale,
                status=409 if stale else 400,
            )
        sheet = selectors.reviewer_sheet(claim=claim, reviewer=request.user)
    audit_set = claim.answer.audit_set
    if audit_set.is_training and selectors.training_gold(claim=claim, sheet=sheet) is not None:
        return held.go_next(
            request,
            reverse("audit:review-claim", args=[claim.pk]),
            "Submitted. Here is gold for this claim and the lead’s reason.",
        )
    next_id = selectors.next_claim_id(reviewer=request.user, audit_set=audit_set, after=claim)
    if next_id is None:
        return held.go_next(
            request,
            reverse("audit:home"),
            f"Submitted. You have judged every claim in “{audit_set.name}”.",
        )
    return held.go_next(
        request,
        reverse("audit:review-claim", args=[next_id]),
        "Submitted. Here is your next claim.",
    )


def _submitted_as_posted(claim: Claim, request: HtmxHttpRequest, form: SheetForm) -> bool:
    """Whether this reviewer's sheet is already submitted with what was posted, by the
    submit of the version posted: a second copy of one submit, never a different one."""
    return services.sheet_submitted_as(
        sheet=selectors.reviewer_sheet(claim=claim, reviewer=request.user),
        version=form.cleaned_data["version"],
        data=form.sheet_data(),
    )


@login_required
@require_POST
def review_reopen(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_reviewer(request, pk)
    # Only a stored, submitted sheet can be reopened: a reopen must never store a blank one.
    sheet = selectors.reviewer_sheet(claim=claim, reviewer=request.user)
    try:
        if sheet.pk is None:
            raise services.ReviewError("This sheet is not submitted.")
        services.sheet_reopen(sheet=sheet, user=request.user)
    except services.ReviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Reopened: your submitted version is kept in the history.")
    return redirect("audit:review-claim", claim.pk)


@login_required
@require_POST
def flag_raise(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_reviewer(request, pk)
    form = FlagForm(request.POST)
    error = None
    if form.is_valid():
        try:
            services.guideline_flag_raise(
                claim=claim, user=request.user, comment=form.cleaned_data["flag_comment"]
            )
        except services.ReviewError as failure:
            error = str(failure)
    else:
        error = "Say what the guidelines should settle."
    if access.wants_partial(request):
        return render(
            request,
            "audit/review.html#flag-status",
            {
                "claim": claim,
                "flag_error": error,
                # A stored flag empties the box, so a second click cannot send it again.
                "flag_text": request.POST.get("flag_comment", "") if error else "",
                "my_flags": _my_flags(request, claim),
            },
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Flagged for the lead.")
    return redirect("audit:review-claim", claim.pk)


@login_required
@require_POST
def review_skip(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Put the claim back for later with a reason; stores no sheet."""
    claim = access.get_claim_for_reviewer(request, pk)
    form = SkipForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Say why you skip this claim, for the lead.")
        return redirect("audit:review-claim", claim.pk)
    try:
        services.claim_skip(claim=claim, user=request.user, reason=form.cleaned_data["skip_reason"])
    except services.ReviewError as error:
        messages.error(request, str(error))
        return redirect("audit:review-claim", claim.pk)
    audit_set = claim.answer.audit_set
    next_id = selectors.next_claim_id(reviewer=request.user, audit_set=audit_set, after=claim)
    if next_id is None:
        messages.info(request, "Skipped, but no other claim is left: this one is next.")
        return redirect("audit:review-claim", claim.pk)
    messages.success(request, "Skipped: it comes back after your other claims.")
    return redirect("audit:review-claim", next_id)


@login_required
def claim_split(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_splitting(request, pk)
    form = ClaimSplitForm(request.POST or None, initial={"parts": claim.text})
    if request.method == "POST" and form.is_valid():
        try:
            children = services.claim_split(
                claim=claim, parts=form.cleaned_data["parts"], by=request.user
            )
        except services.ReviewError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Split into {len(children)} atomic claims.")
            if children[0].assignments.filter(reviewer=request.user).exists():
                return redirect("audit:review-claim", children[0].pk)
            return redirect("audit:set-claims", claim.answer.audit_set_id)
    cited = sorted(claim.citations.values_list("position", flat=True))
    return render(
        request,
        "audit/claim_split.html",
        {
            "claim": claim,
            "audit_set": claim.answer.audit_set,
            "cited": cited,
            "form": form,
            "atomic": list(claim.atomic_claims.order_by("order")),
            "derived": judgments.JUDGMENT_LABELS.get(selectors.split_verdict(claim=claim) or ""),
        },
    )


# --------------------------------------------------------------------------- helpers


def _positions(claim: Claim) -> list[int]:
    return list(claim.answer.passages.order_by("position").values_list("position", flat=True))


def _posted_version(request: HtmxHttpRequest, sheet: AuditSheet) -> int:
    try:
        return int(request.POST.get("version", ""))
    except ValueError:
        return sheet.version


def _keep_as_draft(
    request: HtmxHttpRequest, sheet: AuditSheet, form: SheetForm
) -> AuditSheet | None:
    """What an incomplete submit carried, saved as the draft it still is.

    A reviewer who presses Submit too early keeps every field they filled in; None when
    even the draft save is refused (then the page shows the posted values, unsaved).
    """
    try:
        return services.sheet_save(
            sheet=sheet,
            user=request.user,
            version=form.cleaned_data["version"],
            data=form.sheet_data(),
            active_seconds=form.cleaned_data["active_seconds"] or 0,
        )
    except services.ReviewError:
        return None


def _opened_token(claim: Claim) -> str:
    """When the page was shown, signed: the save that stores the sheet counts the reading
    time before it, and a client cannot claim more than the page's age."""
    return signing.dumps({"claim": claim.pk, "at": int(time.time())}, salt=OPENED_SALT)


def _posted_opened(request: HtmxHttpRequest, claim: Claim) -> datetime | None:
    try:
        opened = signing.loads(
            request.POST.get("opened", ""), salt=OPENED_SALT, max_age=OPENED_MAX_AGE
        )
    except signing.BadSignature:
        return None
    if not isinstance(opened, dict) or opened.get("claim") != claim.pk:
        return None
    return datetime.fromtimestamp(opened["at"], tz=UTC)


def _posted_tab(request: HtmxHttpRequest) -> tuple[str, int]:
    """The browser tab and its save number; anything malformed counts as no tab at all,
    which only makes the version check strict."""
    tab = request.POST.get("tab", "")
    seq = request.POST.get("seq", "")
    if not (TAB_ID.fullmatch(tab) and seq.isdigit() and 0 < int(seq) < 2**63):
        return "", 0
    return tab, int(seq)


def _form_errors(form: SheetForm) -> list[str]:
    # The label the reviewer reads on the page, not the field's name in the code.
    return [
        error if field == "__all__" else f"{form[field].label}: {error}"
        for field, errors in form.errors.items()
        for error in errors
    ]


def _save_failed(
    request: HtmxHttpRequest,
    claim: Claim,
    sheet: AuditSheet,
    form: SheetForm,
    problems: list[str],
    status: int,
    version: int,
) -> HttpResponse:
    # The client keeps the version it sent: a stale tab stays stale until it is reloaded.
    if access.wants_partial(request):
        return render(
            request,
            "audit/review.html#save-status",
            {
                "save_state": "stale" if status == 409 else "invalid",
                "save_problems": problems,
                "version": version,
                "sheet": sheet,
            },
            status=status,
        )
    return _render_review(
        request, claim, sheet, form=form, problems=problems, stale=status == 409, status=status
    )


def _my_flags(request: HtmxHttpRequest, claim: Claim) -> list[GuidelineFlag]:
    return list(GuidelineFlag.objects.filter(claim=claim, raised_by=request.user))


def _values(sheet: AuditSheet, form: SheetForm | None) -> dict:
    """What the sheet's inputs show: the sheet as stored, or what was just posted."""
    if form is not None:
        data = form.data
        return {
            "judgment": data.get("judgment", ""),
            "evidence": set(data.getlist("evidence")),
            "wrong": data.get("wrong_citation_passage", ""),
            "flags": judgments.flag_inputs({n: bool(data.get(n)) for n in judgments.FLAG_NAMES}),
            "assertions": data.get("unsupported_assertions", ""),
            "assertion_spans": display.posted_assertions(data.getlist("unsupported_item")),
            "notes": data.get("notes", ""),
            "version": data.get("version", sheet.version),
        }
    stored = judgments.stored_assertions(sheet.unsupported_assertions)
    return {
        "judgment": sheet.judgment,
        "evidence": {judgments.stored_key(e) for e in sheet.evidence},
        "wrong": str(sheet.wrong_citation_passage.position) if sheet.wrong_citation_passage else "",
        "flags": judgments.flag_inputs({n: getattr(sheet, n) for n in judgments.FLAG_NAMES}),
        "assertions": "\n".join(a["text"] for a in stored if a["start"] is None),
        "assertion_spans": [a for a in stored if a["start"] is not None],
        "notes": sheet.notes,
        "version": sheet.version,
    }


def _suggestions(statement: str, passages: list) -> list[tuple[int, int]]:
    """The matcher's suggested unsupported spans of the claim against its cited passages:
    computed for the page (a few milliseconds), never stored in the sheet. A claim whose
    cited passages hold no text gets none: the whole claim would be "unsupported"."""
    texts = [p.text for p in passages if p.text.strip()]
    if not texts or not statement.strip():
        return []
    # Prepared once per process: a long source costs ~10 ms per 10,000 characters to split
    # and index, on every showing of the page otherwise.
    prepared = [matching.cached_passage(text) for text in texts]
    return [(s.start, s.end) for s in unsupported.unsupported_spans(statement, prepared)]


def _suggested_by(name: str, score: float | None) -> str:
    return name if score is None else f"{name} · {score:.2f}"


def _render_review(
    request: HtmxHttpRequest,
    claim: Claim,
    sheet: AuditSheet,
    *,
    form: SheetForm | None = None,
    problems: list[str] = (),
    stale: bool = False,
    status: int = 200,
) -> HttpResponse:
    answer = claim.answer
    audit_set = answer.audit_set
    values = _values(sheet, form)
    passages = list(answer.passages.order_by("position"))
    cited = sorted(claim.citations.values_list("position", flat=True))
    suggested = review_suggestion(audit_set=audit_set, claim=claim)
    # A withheld claim shows no suggestion at all, the matcher's checks included: the
    # comparison with and without suggestions needs a page free of machine hints.
    check = None if suggested.withheld else getattr(claim, "machine_check", None)
    marks: dict[int, list[tuple[int, int, int]]] = {}
    # rank → its label, for a source other than the matcher (whose ranking scores are on
    # another scale and never shown).
    rank_labels: dict[int, str] = {}
    if suggested.is_matcher:
        hints = judgments.machine_hints(check.highlights if check else [])
        for rank, h in enumerate(hints, start=1):
            marks.setdefault(h["passage"], []).append((h["start"], h["end"], rank))
    else:
        for rank, e in enumerate(suggested.evidence, start=1):
            marks.setdefault(e.passage, []).append((e.start, e.end, rank))
            rank_labels[rank] = _suggested_by(suggested.name, e.score)

    # Evidence that is not a whole sentence (a selection, a trimmed sentence, or a sentence
    # saved under other boundaries) is marked in its passage and listed under it.
    parts, lost = display.evidence_parts(passages, judgments.evidence_spans(values["evidence"]))
    tagged = {n: [(s, e, "ev") for s, e in spans] for n, spans in parts.items()}
    cited_views, other_views = [], []
    for view in display.passage_views(passages, marks, tagged):
        position = view.passage.position
        sentences = []
        for s in view.sentences:
            key = judgments.evidence_key(position, s.start, s.end)
            sentences.append(
                {
                    "key": key,
                    "start": s.start,
                    "end": s.end,
                    "pieces": s.pieces,
                    "gap_pieces": s.gap_pieces,
                    "rank": min(s.highlight_for) if s.highlight_for else None,
                    "suggested_by": rank_labels.get(min(s.highlight_for))
                    if s.highlight_for
                    else "",
                    "selected": key in values["evidence"],
                }
            )
        entry = {
            "passage": view.passage,
            "sentences": sentences,
            # A pushed source's evidence as it marked it ("start-end ..."): `e` takes these
            # spans, a part of a sentence as a part. The matcher marks whole sentences.
            "suggested_spans": " ".join(
                f"{e.start}-{e.end}" for e in suggested.evidence if e.passage == position
            ),
            "tail": view.tail,
            "parts": [
                {
                    "key": judgments.evidence_key(position, s, e),
                    "start": s,
                    "end": e,
                    "text": view.passage.text[s:e],
                }
                for s, e in parts.get(position, [])
            ],
        }
        (cited_views if position in cited else other_views).append(entry)
    orphans = [
        {"key": judgments.evidence_key(*span), "passage": span[0], "text": f"{span[1]}–{span[2]}"}
        for span in lost
    ]

    statement = sheet.answer_statement
    assertion_spans = display.assertion_views(statement, values["assertion_spans"])
    if suggested.withheld:
        suggestions = []
    elif suggested.is_matcher:
        suggestions = _suggestions(statement, [p for p in passages if p.position in cited])
    else:
        suggestions = [(w.start, w.end) for w in suggested.words if w.end <= len(statement)]
    claim_pieces = display.text_pieces(
        statement,
        0,
        len(statement),
        [(a["start"], a["end"], "un") for a in assertion_spans]
        + [(s, e, "un-hint") for s, e in suggestions],
    )

    top_level = list(answer.claims.filter(parent__isnull=True).order_by("order"))
    pieces = display.answer_pieces(answer, top_level, current=claim.parent_id or claim.pk)
    anchored = False
    for piece in pieces:
        # Markers cut the claim into several pieces; the first one is the scroll anchor.
        piece.anchor = piece.current and not anchored
        anchored = anchored or piece.current
    # The claim is read in its paragraph; the whole answer opens on demand.
    context_pieces, context_more = display.paragraph_pieces(pieces)
    wrong = None
    if check and check.wrong_citation:
        w = check.wrong_citation
        source = next((p for p in passages if p.position == w["passage"]), None)
        if source is not None:
            wrong = {
                "passage": w["passage"],
                "text": display.excerpt(source.text, w["start"], w["end"]),
            }
    place = selectors.queue_place(reviewer=request.user, audit_set=audit_set, claim=claim)
    next_id = selectors.next_claim_id(reviewer=request.user, audit_set=audit_set, after=claim)
    submitted = sheet.status == AuditSheet.Status.SUBMITTED
    definitions = judgments.judgment_definitions(audit_set.guidelines)
    ctx = {
        "prefetch": held.is_prefetch(request),
        "audit_set": audit_set,
        "answer": answer,
        "claim": claim,
        "sheet": sheet,
        "values": values,
        "version": values["version"],
        "submitted": submitted,
        "guidelines": display.guidelines_html(audit_set.guidelines) if audit_set.guidelines else "",
        "pieces": pieces,
        "context_pieces": context_pieces,
        "context_more": context_more,
        "cited": cited,
        "check": check,
        "check_stale": check is not None and check.matcher_version != matching.MATCHER_VERSION,
        # Told on load, not on submit: a paused queue's claim opens read-only.
        "paused": not submitted and selectors.is_paused(reviewer=request.user, audit_set=audit_set),
        "differences": display.word_differences(
            claim, check, [p for p in passages if p.position in cited]
        ),
        "wrong": wrong,
        "cited_passages": cited_views,
        "other_passages": other_views,
        "other_open": any(s["selected"] for v in other_views for s in v["sentences"])
        or any(v["parts"] for v in other_views)
        or values["wrong"] != "",
        "orphans": orphans,
        "evidence_count": len(values["evidence"]),
        "claim_pieces": claim_pieces,
        "assertion_spans": assertion_spans,
        "suggestions": [
            {"start": s, "end": e, "text": statement[s:e]}
            for s, e in suggestions
            if not any(a["start"] <= s and e <= a["end"] for a in assertion_spans)
        ],
        "suggested": suggested,
        "suggested_judgment_label": (
            suggested.judgment_label
            + ("" if suggested.judgment_score is None else f" ({suggested.judgment_score:.2f})")
            if suggested.judgment
            else ""
        ),
        "uncited_positions": [p.position for p in passages if p.position not in cited],
        "judgment_choices": [
            (code, label, definitions[code]) for code, label in judgments.JUDGMENTS
        ],
        "position": place.position,
        "in_answer": place.in_answer,
        "assigned": place.assigned,
        "done": place.done,
        "next_url": reverse("audit:review-claim", args=[next_id]) if next_id else "",
        "siblings": claim.parent.atomic_claims.count() if claim.parent_id else 0,
        # Only a lead's decision freezes a sheet: unanimous gold, which depends on the other
        # sheet, must not change what this page offers.
        "can_reopen": submitted
        and (
            selectors.is_control_for(claim=claim, reviewer=request.user)
            or not selectors.lead_decided(claim=claim)
        ),
        "can_split": (
            audit_set.allow_reviewer_split
            and claim.parent_id is None
            and not submitted
            and not values["judgment"]
        ),
        "problems": problems,
        "stale": stale,
        "save_state": "stale" if stale else "idle",
        "opened": "" if sheet.pk else _opened_token(claim),
        "my_flags": _my_flags(request, claim),
        "flag_form": FlagForm(),
        "skip": ClaimSkip.objects.filter(claim=claim, reviewer=request.user).first(),
        "training_gold": selectors.training_gold(claim=claim, sheet=sheet),
        **calibration.thread_context(request, claim),
    }
    return render(request, "audit/review.html", ctx, status=status)
