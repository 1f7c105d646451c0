"""The lead's side of adjudication: a set's adjudication settings and disagreement queue,
resolving one claim into gold next to its sheets, and a claim's full history."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from audit import judgments, selectors, services
from audit.filters import AdjudicationQueueFilter
from audit.forms import AdjudicationForm, AdjudicationSettingsForm
from audit.models import Adjudication, AuditSheet, Claim, Job, Passage, Severity
from audit.tables import AdjudicationQueueTable
from audit.views import access, calibration, display, held
from audit.views.access import HtmxHttpRequest

PER_PAGE = 50


def _blind_notice(request: HtmxHttpRequest, claim: Claim) -> HttpResponse:
    """A lead who reviews this claim sees none of its other sheets until theirs is in."""
    return render(
        request,
        "audit/claim_blind.html",
        {"claim": claim, "audit_set": claim.answer.audit_set},
        status=403,
    )


@login_required
def adjudication_settings(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = AdjudicationSettingsForm(request.POST or None, instance=audit_set)
    if request.method == "POST" and form.is_valid():
        result = services.adjudication_settings_apply(
            audit_set=audit_set,
            by=request.user,
            auto_gold=form.cleaned_data["auto_gold"],
            evidence_jaccard_threshold=form.cleaned_data["evidence_jaccard_threshold"],
            anonymous_adjudication=form.cleaned_data["anonymous_adjudication"],
        )
        if isinstance(result, Job):
            messages.success(request, "The new settings apply when this job has compared.")
            return redirect(result)
        messages.success(
            request,
            f"Settings saved. Compared {result.compared} finished claims again: "
            f"{result.unanimous} became unanimous gold.",
        )
        return redirect("audit:adjudication-queue", audit_set.pk)
    return render(
        request, "audit/adjudication_settings.html", {"audit_set": audit_set, "form": form}
    )


@login_required
@require_POST
def set_rematch(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Queue recomputing the set's machine checks (after the matcher changed)."""
    audit_set = access.get_set_for_lead(request, pk)
    return redirect(services.job_rematch_create(audit_set=audit_set, user=request.user))


@login_required
def adjudication_queue(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    filterset = AdjudicationQueueFilter(
        request.GET,
        queryset=selectors.adjudication_queue(audit_set=audit_set, viewer=request.user),
        audit_set=audit_set,
    )
    table = AdjudicationQueueTable(
        filterset.qs,
        anonymous=audit_set.anonymous_adjudication,
        letters=selectors.sheet_letters(audit_set=audit_set),
    )
    RequestConfig(request, paginate={"per_page": PER_PAGE}).configure(table)
    return access.render_page_or_partial(
        request,
        "audit/adjudication_queue.html",
        "results",
        {"audit_set": audit_set, "table": table, "filter": filterset},
    )


@login_required
def adjudicate(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_lead(request, pk)
    if selectors.is_blind(user=request.user, claim=claim):
        return _blind_notice(request, claim)
    return _render_adjudication(request, claim)


@login_required
@require_POST
def adjudicate_save(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_lead(request, pk)
    if selectors.is_blind(user=request.user, claim=claim):
        return _blind_notice(request, claim)
    form = AdjudicationForm(request.POST, passage_positions=_positions(claim))
    if not form.is_valid():
        # Labels as the page shows them, not the fields' names in the code.
        problems = [
            e if name == "__all__" else f"{form[name].label}: {e}"
            for name, errors in form.errors.items()
            for e in errors
        ]
        return _render_adjudication(request, claim, form=form, problems=problems, status=400)
    data = form.cleaned_data
    take = data["take"]
    try:
        gold = services.adjudication_save(
            claim=claim,
            lead=request.user,
            version=data["version"],
            take=take,
            data=None if take is not None else form.gold_data(),
            reason=data["reason"],
            note=data["note"],
            flag_comment=data["flag_comment"],
            numbers_overridden=data["numbers_overridden"],
            numbers_override_reason=data["numbers_override_reason"],
        )
    except services.StaleAdjudication as stale:
        # The same save sent again after its answer was lost (the connection dropped) is
        # done: the lead goes on as if the first answer had arrived.
        if not services.adjudication_saved_as(
            claim=claim,
            lead=request.user,
            version=data["version"],
            take=take,
            data=None if take is not None else form.gold_data(),
            reason=data["reason"],
            note=data["note"],
            numbers_overridden=data["numbers_overridden"],
            numbers_override_reason=data["numbers_override_reason"],
        ):
            return _render_adjudication(
                request, claim, form=form, problems=[str(stale)], stale=True, status=409
            )
        gold = Adjudication.objects.get(claim=claim)
    except services.SheetIncomplete as incomplete:
        return _render_adjudication(request, claim, form=form, problems=incomplete.problems)
    except services.ReviewError as error:
        return _render_adjudication(request, claim, form=form, problems=[str(error)], status=400)
    audit_set = claim.answer.audit_set
    label = judgments.JUDGMENT_LABELS[gold.judgment]
    next_id = selectors.next_in_adjudication_queue(
        audit_set=audit_set, after=claim, viewer=request.user
    )
    if next_id is None:
        return held.go_next(
            request,
            reverse("audit:adjudication-queue", args=[audit_set.pk]),
            f"Gold saved ({label}). The queue is empty.",
        )
    return held.go_next(
        request,
        reverse("audit:adjudicate", args=[next_id]),
        f"Gold saved ({label}). Here is the next claim in the queue.",
    )


# --------------------------------------------------------------------------- history


@dataclass
class Change:
    field: str
    old: str
    new: str


@dataclass
class Version:
    when: datetime
    who: str
    kind: str
    changes: list[Change] = field(default_factory=list)


@dataclass
class Track:
    title: str
    versions: list[Version]


# Bookkeeping every save touches; the version number and times are shown per row already.
_NOT_A_CHANGE = {
    "id",
    "claim",
    "created_at",
    "updated_at",
    "version",
    "client_tab",
    "client_seq",
    "client_version",
    # Recorded on submit; the adjudication page names it beside the sheet.
    "guideline_version",
    # What the review page showed, recorded with every save for the suggestions report.
    "suggestions_withheld",
    "suggestion_source_shown",
}
_KINDS = {"+": "created", "~": "changed", "-": "deleted"}


@login_required
def claim_history(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = access.get_claim_for_lead(request, pk)
    if selectors.is_blind(user=request.user, claim=claim):
        return _blind_notice(request, claim)
    audit_set = claim.answer.audit_set
    anonymous = audit_set.anonymous_adjudication
    current = [s.pk for s in selectors.adjudication_sheets(claim=claim)]
    sheet_records = list(
        AuditSheet.history.filter(claim_id=claim.pk)
        .select_related("history_user")
        .order_by("history_date", "history_id")
    )
    sheet_ids = list(dict.fromkeys([*current, *sorted({r.id for r in sheet_records})]))
    reviewers = {r.id: r.reviewer_id for r in sheet_records}
    by_reviewer = selectors.sheet_letters(audit_set=audit_set)
    letters = {
        sheet_id: by_reviewer.get(reviewers.get(sheet_id)) or judgments.sheet_letter(i)
        for i, sheet_id in enumerate(sheet_ids)
    }
    positions = dict(
        Passage.objects.filter(answer_id=claim.answer_id).values_list("pk", "position")
    )
    gold_records = list(
        Adjudication.history.filter(claim_id=claim.pk)
        .select_related("history_user")
        .order_by("history_date", "history_id")
    )
    people = {r.reviewer_id for r in sheet_records} | {r.lead_id for r in gold_records}
    usernames = dict(
        get_user_model().objects.filter(pk__in=people - {None}).values_list("pk", "username")
    )

    def _username(user_id: int | None) -> str:
        return "—" if user_id is None else usernames.get(user_id, f"user {user_id}")

    def person(user, sheet_id: int | None = None) -> str:
        if user is None:
            return "—"
        if anonymous and sheet_id is not None and user.pk == reviewers.get(sheet_id):
            return f"Reviewer {letters[sheet_id]}"
        return user.get_username()

    def shown(name: str, value, sheet_id: int | None) -> str:
        if value in (None, "", []):
            return "—"
        if isinstance(value, datetime):
            return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")
        if name == "judgment":
            return judgments.JUDGMENT_LABELS.get(value, value)
        if name == "evidence":
            return "; ".join(f"[{e['passage']}] {e['text']}" for e in value)
        if name == "unsupported_assertions":
            return "; ".join(
                a["text"] + (f" ({a['note']})" if a["note"] else "")
                for a in judgments.stored_assertions(value)
            )
        if name == "cited_urls":
            return "; ".join(value)
        if name == "wrong_citation_passage":
            return f"[{positions[value]}]" if value in positions else "(deleted passage)"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if name == "reviewer":
            return f"Reviewer {letters[sheet_id]}" if anonymous else _username(value)
        if name == "lead":
            return _username(value)
        if name == "from_sheet":
            return f"sheet {letters.get(value, '?')}"
        if name == "source":
            return Adjudication.Source(value).label
        if name == "reason":
            return Adjudication.Reason(value).label
        return str(value)

    def track(records: list, sheet_id: int | None) -> list[Version]:
        versions = []
        previous = None
        for record in records:
            who = person(record.history_user, sheet_id)
            if sheet_id is None and record.history_user is None:
                who = "automatic (unanimous sheets)" if record.source == "unanimous" else "—"
                if record.history_type == "-":
                    who = "automatic (withdrawn: a sheet was reopened)"
            version = Version(
                when=record.history_date,
                who=f"{who} · v{record.version}",
                kind=_KINDS[record.history_type],
            )
            if previous is None:
                for f in record.instance_type._meta.fields:
                    value = getattr(record, f.attname)
                    if f.name not in _NOT_A_CHANGE and value not in (None, "", []):
                        version.changes.append(Change(f.name, "", shown(f.name, value, sheet_id)))
            else:
                delta = record.diff_against(previous, excluded_fields=_NOT_A_CHANGE)
                for change in delta.changes:
                    version.changes.append(
                        Change(
                            change.field,
                            shown(change.field, change.old, sheet_id),
                            shown(change.field, change.new, sheet_id),
                        )
                    )
            versions.append(version)
            previous = record
        return versions

    tracks = []
    for sheet_id in sheet_ids:
        records = [r for r in sheet_records if r.id == sheet_id]
        title = f"Sheet {letters[sheet_id]}"
        if not anonymous and records:
            title += f" · {_username(records[-1].reviewer_id)}"
        tracks.append(Track(title, track(records, sheet_id)))
    if gold_records:
        tracks.append(Track("Gold record", track(gold_records, None)))
    return render(
        request,
        "audit/claim_history.html",
        {"claim": claim, "audit_set": audit_set, "tracks": tracks},
    )


# --------------------------------------------------------------------------- helpers


def _positions(claim: Claim) -> list[int]:
    return list(claim.answer.passages.order_by("position").values_list("position", flat=True))


def _flags(checked: dict[str, bool]) -> list[dict]:
    return judgments.flag_inputs(checked, with_help=False)


def _values(
    sheets: list[AuditSheet], gold: Adjudication | None, form: AdjudicationForm | None
) -> dict:
    """What the gold form shows: what was just posted, the gold record, or what every
    sheet agrees on."""
    if form is not None:
        data = form.data
        return {
            "judgment": data.get("judgment", ""),
            "evidence": judgments.evidence_spans(data.getlist("evidence")),
            "wrong": data.get("wrong_citation_passage", ""),
            "flags": _flags({n: bool(data.get(n)) for n in judgments.FLAG_NAMES}),
            "assertions": data.get("unsupported_assertions", ""),
            "assertion_spans": display.posted_assertions(data.getlist("unsupported_item")),
            "reason": data.get("reason", ""),
            "note": data.get("note", ""),
            "flag": bool(data.get("flag")),
            "flag_comment": data.get("flag_comment", ""),
            "numbers_overridden": bool(data.get("numbers_overridden")),
            "numbers_override_reason": data.get("numbers_override_reason", ""),
            "version": data.get("version", gold.version if gold else 0),
        }
    if gold is not None:
        stored = judgments.stored_assertions(gold.unsupported_assertions)
        return {
            "judgment": gold.judgment,
            "evidence": set(judgments.stored_spans(gold.evidence)),
            "wrong": str(gold.wrong_citation_passage.position)
            if gold.wrong_citation_passage
            else "",
            "flags": _flags({n: getattr(gold, n) for n in judgments.FLAG_NAMES}),
            "assertions": "\n".join(a["text"] for a in stored if a["start"] is None),
            "assertion_spans": [a for a in stored if a["start"] is not None],
            "reason": gold.reason,
            "note": gold.note,
            "flag": False,
            "flag_comment": "",
            "numbers_overridden": gold.numbers_overridden,
            "numbers_override_reason": gold.numbers_override_reason,
            "version": gold.version,
        }
    # Before the lead decides, gold holds only what every sheet says: a union would put one
    # reviewer's sentences into gold unseen, and they stay there when the judgment changes.
    said = {s.judgment for s in sheets}
    wrong = {
        s.wrong_citation_passage.position if s.wrong_citation_passage else None for s in sheets
    }
    evidence = [set(judgments.stored_spans(s.evidence)) for s in sheets]
    keys = [judgments.assertion_keys(s.unsupported_assertions) for s in sheets]
    shared = frozenset.intersection(*keys) if keys else frozenset()
    agreed = [
        a
        for a in judgments.merged_assertions(s.unsupported_assertions for s in sheets)
        if judgments.assertion_key(a) in shared
    ]
    return {
        "judgment": said.pop() if len(said) == 1 else "",
        "evidence": set.intersection(*evidence) if evidence else set(),
        "wrong": str(next(iter(wrong))) if len(wrong) == 1 and None not in wrong else "",
        # A flag any reviewer set stays set: unticking it is the lead's call, made visibly.
        "flags": _flags(
            {n: any(getattr(s, n) for s in sheets) for n in judgments.FLAG_NAMES} if sheets else {}
        ),
        "assertions": "\n".join(a["text"] for a in agreed if a["start"] is None),
        "assertion_spans": [a for a in agreed if a["start"] is not None],
        "reason": "",
        "note": "",
        "flag": False,
        "flag_comment": "",
        "numbers_overridden": False,
        "numbers_override_reason": "",
        "version": 0,
    }


def _assertion_candidates(text: str, said: dict[str, list[dict]], chosen: list[dict]) -> list[dict]:
    """Every unsupported span a sheet or the gold form holds, once per (start, end): who
    marked it, their notes, and whether gold has it. Posted back with its text, so a claim
    whose text changed since refuses it instead of shifting it."""
    spans: dict[tuple[int, int], dict] = {}
    for letter, items in [*said.items(), ("", chosen)]:
        for item in items:
            entry = spans.setdefault(
                (item["start"], item["end"]),
                {"start": item["start"], "end": item["end"], "by": [], "notes": []},
            )
            if letter:
                entry["by"].append(letter)
            if item["note"] and item["note"] not in entry["notes"]:
                entry["notes"].append(item["note"])
    picked = {(a["start"], a["end"]) for a in chosen}
    candidates = []
    for (start, end), entry in sorted(spans.items()):
        note = "; ".join(entry["notes"])
        candidates.append(
            {
                **entry,
                "text": text[start:end],
                "note": note,
                "checked": (start, end) in picked,
                "json": json.dumps(
                    {"start": start, "end": end, "text": text[start:end], "note": note}
                ),
            }
        )
    return candidates


def _render_adjudication(
    request: HtmxHttpRequest,
    claim: Claim,
    *,
    form: AdjudicationForm | None = None,
    problems: list[str] = (),
    stale: bool = False,
    status: int = 200,
) -> HttpResponse:
    answer = claim.answer
    audit_set = answer.audit_set
    anonymous = audit_set.anonymous_adjudication
    sheets = selectors.adjudication_sheets(claim=claim)
    gold = (
        Adjudication.objects.select_related("lead", "wrong_citation_passage", "from_sheet")
        .filter(claim=claim)
        .first()
    )
    values = _values(sheets, gold, form)
    passages = list(answer.passages.order_by("position"))
    cited = set(claim.citations.values_list("position", flat=True))
    check = getattr(claim, "machine_check", None)
    cards = []
    chosen = {}
    said: dict[str, list[dict]] = {}  # letter → that sheet's unsupported spans of claim.text
    by_reviewer = selectors.sheet_letters(audit_set=audit_set)
    styles: dict[str, str] = {}  # letter → "a", "b" or "other": colours go by place on the page
    for i, sheet in enumerate(sheets):
        letter = by_reviewer.get(sheet.reviewer_id) or judgments.sheet_letter(i)
        styles[letter] = "ab"[i] if i < 2 else "other"
        chosen[letter] = set(judgments.stored_spans(sheet.evidence))
        items = judgments.stored_assertions(sheet.unsupported_assertions)
        # Spans index the claim as this reviewer saw it; marked on today's text only when
        # that is the same text.
        if sheet.answer_statement == claim.text:
            said[letter] = [a for a in items if a["start"] is not None]
        cards.append(
            {
                "sheet": sheet,
                "letter": letter,
                "style": styles[letter],
                "name": "" if anonymous else sheet.reviewer.get_username(),
                "judgment": judgments.JUDGMENT_LABELS.get(sheet.judgment, "—"),
                "fast": sheet.active_seconds < selectors.FAST_SECONDS,
                "flags": _flags({n: getattr(sheet, n) for n in judgments.FLAG_NAMES}),
                "assertions": items,
                "statement_changed": sheet.answer_statement != claim.text,
            }
        )
    named = {s.wrong_citation_passage.position for s in sheets if s.wrong_citation_passage}
    views = display.marked_passages(
        passages,
        cited=cited,
        chosen=chosen,
        hints=judgments.hint_keys(check.highlights if check else []),
        selected=values["evidence"],
        named=named,
        styles=styles,
    )
    matched = {s.key for v in views for s in v.sentences}
    # Evidence that is not a whole sentence (a part of a passage, or a sentence saved under
    # other boundaries) is offered as its own checkbox, with who chose it: never lost.
    texts = {
        (e["passage"], e["start"], e["end"]): e["text"]
        for source in [*(s.evidence for s in sheets), gold.evidence if gold else []]
        for e in source
    }
    orphans = [
        {
            "key": judgments.evidence_key(p, s, e),
            "passage": p,
            "text": texts.get((p, s, e), f"{s}–{e}"),
            "checked": (p, s, e) in values["evidence"],
            "by": [
                display.Badge(letter, styles[letter])
                for letter, spans in chosen.items()
                if (p, s, e) in spans
            ],
        }
        for p, s, e in sorted(values["evidence"] | set(texts))
        if judgments.evidence_key(p, s, e) not in matched
    ]
    gold_spans = display.assertion_views(claim.text, values["assertion_spans"])
    candidates = _assertion_candidates(claim.text, said, gold_spans)
    for candidate in candidates:
        candidate["by"] = [display.Badge(letter, styles[letter]) for letter in candidate["by"]]
    claim_pieces = display.text_pieces(
        claim.text,
        0,
        len(claim.text),
        [
            (a["start"], a["end"], f"un-{styles[letter]}")
            for letter, items in said.items()
            for a in items
        ],
    )
    top_level = list(answer.claims.filter(parent__isnull=True).order_by("order"))
    following = selectors.next_in_adjudication_queue(
        audit_set=audit_set, after=claim, viewer=request.user
    )
    ctx = {
        "prefetch": held.is_prefetch(request),
        # The claim a save opens next, fetched ahead by the page's script.
        "next_url": reverse("audit:adjudicate", args=[following]) if following else "",
        "audit_set": audit_set,
        "answer": answer,
        "claim": claim,
        "sheets": cards,
        "gold": gold,
        "values": values,
        "version": values["version"],
        "severity": Severity(claim.severity).label if claim.severity is not None else "",
        "severity_code": claim.severity,
        "needs_reason": claim.severity is not None and claim.severity < Severity.CONFIRM,
        "pieces": display.answer_pieces(answer, top_level, current=claim.parent_id or claim.pk),
        "cited": sorted(cited),
        "check": check,
        "differences": display.word_differences(
            claim, check, [p for p in passages if p.position in cited]
        ),
        # The override is offered where the matcher found a number missing, and kept in
        # view on a gold record that has one after a rematch grounded it.
        "offer_number_override": bool(check and check.ungrounded) or values["numbers_overridden"],
        "cited_passages": [v for v in views if v.cited or v.chosen],
        "other_passages": [v for v in views if not (v.cited or v.chosen)],
        "orphans": orphans,
        "claim_pieces": claim_pieces,
        "assertion_candidates": candidates,
        "uncited_positions": [p.position for p in passages if p.position not in cited],
        "judgment_choices": judgments.JUDGMENTS,
        "reason_choices": Adjudication.Reason.choices,
        "waiting": selectors.adjudication_queue(audit_set=audit_set, viewer=request.user)
        .prefetch_related(None)
        .count(),
        "can_save": bool(sheets) and (claim.severity is not None or gold is not None),
        "problems": problems,
        "stale": stale,
        **calibration.thread_context(request, claim),
    }
    return render(request, "audit/adjudicate.html", ctx, status=status)
