"""factory_boy factories for the models the tests build by hand."""

from __future__ import annotations

import socket

import factory
from django.contrib.auth.models import User

from audit import services
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    Membership,
    Passage,
    Question,
    Suggestion,
    SuggestionSource,
    Workspace,
)
from audit.services import EvidenceRef, SheetData
from audit.services.checks import claim_checks_recompute
from audit.services.facts import agreement_facts_refresh


def default_workspace() -> Workspace:
    """The workspace the migration creates (made again after a transactional test's flush)."""
    return Workspace.objects.get_or_create(
        slug=Workspace.DEFAULT_SLUG, defaults={"name": "Default"}
    )[0]


class UserFactory(factory.django.DjangoModelFactory):
    """A user; `role="lead"` (or owner, reviewer) makes them a member of the default
    workspace with that role."""

    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests")

    @factory.post_generation
    def role(self, create: bool, extracted: str | None, **kwargs) -> None:
        if create:
            self.save()
        if create and extracted:
            Membership.objects.update_or_create(
                workspace=default_workspace(), user=self, defaults={"role": extracted}
            )


class AuditSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AuditSet

    name = factory.Sequence(lambda n: f"Set {n}")
    workspace = factory.LazyFunction(default_workspace)
    guidelines = "Judge against the cited passages only."


def answer_with_claims(
    audit_set: AuditSet,
    n_claims: int,
    *,
    system: str = "sys-1",
    external_id: str = "",
    passage: str = "The first sentence. The second sentence. The third sentence.",
) -> tuple[Answer, list[Claim]]:
    """An answer with one cited passage and `n_claims` claims, built without the importer."""
    number = Answer.objects.count()
    question = Question.objects.create(
        audit_set=audit_set, external_id=f"q-{number}", text=f"Question {number}?"
    )
    text = " ".join(f"Claim {i} [1]." for i in range(n_claims))
    answer = Answer.objects.create(
        audit_set=audit_set,
        question=question,
        external_id=external_id or f"a-{number}",
        system=system,
        text=text,
        content_hash=f"{number:064d}",
    )
    source = Passage.objects.create(answer=answer, position=1, title="Source", text=passage)
    claims = []
    at = 0
    for i in range(n_claims):
        claim_text = f"Claim {i} [1]."
        claim = Claim.objects.create(
            answer=answer, order=i, text=f"Claim {i}.", start=at, end=at + len(claim_text)
        )
        claim.citations.add(source)
        claims.append(claim)
        at += len(claim_text) + 1
    return answer, claims


def submitted_sheet(
    claim: Claim, reviewer: User, judgment: str, *, evidence: tuple = (), **fields
) -> AuditSheet:
    """A submitted sheet (and its assignment) stored directly, as imported sheets are, with
    its agreement facts refreshed as the importer refreshes them."""
    Assignment.objects.get_or_create(claim=claim, reviewer=reviewer)
    fields.setdefault("active_seconds", 30)
    sheet = AuditSheet.objects.create(
        claim=claim,
        reviewer=reviewer,
        answer_statement=claim.text,
        judgment=judgment,
        evidence=list(evidence),
        status=AuditSheet.Status.SUBMITTED,
        **fields,
    )
    # Facts only, past claims_changed: the dashboard tests build states the services never would.
    agreement_facts_refresh(claim_ids=[claim.pk])
    return sheet


def claim_at(answer_id: str, order: int, parent: int | None = None) -> Claim:
    """The claim at `order` of an imported answer: top level, or under the claim at `parent`."""
    if parent is None:
        return Claim.objects.get(answer__external_id=answer_id, order=order, parent__isnull=True)
    return Claim.objects.get(answer__external_id=answer_id, order=order, parent__order=parent)


def evidence_ref(claim: Claim, position: int, text: str) -> EvidenceRef:
    """The span of `text` in the claim's passage at `position`, as the review page sends it."""
    start = claim.answer.passages.get(position=position).text.index(text)
    return EvidenceRef(passage=position, start=start, end=start + len(text))


def submit_sheet(
    user: User,
    claim: Claim,
    judgment: str,
    *evidence: EvidenceRef,
    seconds: int | None = None,
    **data,
) -> AuditSheet:
    """The user's sheet of the claim submitted through the review service; `seconds` sets the
    active time first (a sheet under 2 seconds is flagged as fast)."""
    sheet = services.sheet_for(claim=claim, reviewer=user)
    if seconds is not None:
        AuditSheet.objects.filter(pk=sheet.pk).update(active_seconds=seconds)
        sheet.refresh_from_db()
    return services.sheet_submit(
        sheet=sheet,
        user=user,
        version=sheet.version,
        data=SheetData(judgment=judgment, evidence=evidence, **data),
    )


def closed_loopback_port() -> int:
    """A loopback port that nothing listens on (bound, then released): a database or
    receiver there refuses the connection at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ------------------------------------------------------------------------------ suggestions

SUPPORTED, NOT = "supported", "not_supported"
SUGGESTION_PASSAGE = "The first sentence. The second sentence. The third sentence."
SECOND = (1, 20, 40)  # "The second sentence."


def _evidence(span: tuple[int, int, int]) -> dict:
    passage, start, end = span
    return {"passage": passage, "start": start, "end": end, "text": SUGGESTION_PASSAGE[start:end]}


def suggestion_gold_set(reviewer_a: User, reviewer_b: User) -> tuple:
    """Ten claims, each submitted by both reviewers and given gold: six supported by the
    second sentence, four not supported with their first word marked unsupported. Both
    reviewers were shown the "right" source and kept its judgment."""
    audit_set = AuditSetFactory(name="Gold", show_suggested_judgment=True)
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    _, claims = answer_with_claims(audit_set, 10, passage=SUGGESTION_PASSAGE)
    for claim in claims:
        claim.text = "The second sentence."
        claim.save(update_fields=["text"])
    claim_checks_recompute(audit_set=audit_set)
    right = SuggestionSource.objects.create(audit_set=audit_set, name="Right", version="1")
    always = SuggestionSource.objects.create(audit_set=audit_set, name="Always", version="1")
    for i, claim in enumerate(claims):
        supported = i < 6
        judgment = SUPPORTED if supported else NOT
        evidence = [_evidence(SECOND)] if supported else []
        unsupported = [] if supported else [{"start": 0, "end": 3, "text": "The"}]
        for reviewer in (reviewer_a, reviewer_b):
            submitted_sheet(
                claim,
                reviewer,
                judgment,
                evidence=evidence,
                suggestion_source_shown=f"source:{right.pk}",
            )
        Adjudication.objects.create(
            claim=claim,
            judgment=judgment,
            source="unanimous",
            evidence=evidence,
            unsupported_assertions=[{**u, "note": ""} for u in unsupported],
        )
        Suggestion.objects.create(
            source=right,
            claim=claim,
            judgment=judgment,
            judgment_score=0.9,
            evidence=[{**_evidence(SECOND), "score": 0.9}] if supported else [],
            unsupported=[{**u, "score": 0.8} for u in unsupported],
        )
        Suggestion.objects.create(source=always, claim=claim, judgment=SUPPORTED)
    return audit_set, claims, right, always


def anchoring_set(reviewer_a: User, reviewer_b: User) -> AuditSet:
    """Sixty claims with gold "supported": on the thirty shown, both reviewers follow the
    suggestion ("supported"); on the thirty withheld, every other claim splits them."""
    audit_set = AuditSetFactory(name="Anchored", withhold_share=0.5, withhold_seed="s")
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    _, claims = answer_with_claims(audit_set, 60)
    for i, claim in enumerate(claims):
        withheld = i >= 30
        second = NOT if withheld and i % 2 else SUPPORTED
        for reviewer, judgment in ((reviewer_a, SUPPORTED), (reviewer_b, second)):
            submitted_sheet(
                claim,
                reviewer,
                judgment,
                suggestions_withheld=withheld,
                suggestion_source_shown="" if withheld else "matcher",
            )
        Adjudication.objects.create(claim=claim, judgment=SUPPORTED, source="edited")
    return audit_set
