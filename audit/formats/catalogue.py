"""The export formats a set can be downloaded in: names, labels, file types, and what each
reads, so that a format skips long texts and tables it does not use.

Pure data, shared by the export service, the export pages and the job selectors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Needs:
    """What a format reads, so the others skip long texts and unused tables."""

    texts: bool  # answer and passage texts
    drafts: bool  # draft sheets besides submitted ones
    checks: bool  # machine checks
    extras: bool  # assignments and rater labels


@dataclass(frozen=True)
class ExportFormat:
    name: str
    label: str
    description: str
    extension: str
    content_type: str
    needs: Needs


EXPORT_FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat(
            "jsonl",
            "JSON Lines",
            "Everything, a line per answer and per claim; import_answers reads it back.",
            "jsonl",
            "application/x-ndjson; charset=utf-8",
            Needs(texts=True, drafts=True, checks=True, extras=True),
        ),
        ExportFormat(
            "audit-sheets",
            "Audit sheets",
            "Submitted sheets and gold records as a JSON array.",
            "json",
            "application/json; charset=utf-8",
            Needs(texts=False, drafts=False, checks=False, extras=False),
        ),
        ExportFormat(
            "csv",
            "Claims table",
            "One row per claim for spreadsheets.",
            "csv",
            "text/csv; charset=utf-8",
            Needs(texts=False, drafts=True, checks=True, extras=False),
        ),
        ExportFormat(
            "evidence",
            "Evidence table",
            "Every evidence span checked against its passage (CSV).",
            "csv",
            "text/csv; charset=utf-8",
            Needs(texts=True, drafts=True, checks=False, extras=False),
        ),
    )
}
