"""Import and export formats: pure-Python parsers that turn uploaded files into answer
records, and writers (export_*) that turn a set's labelled records into files.

No Django here; the import and export services move the records to and from the models.
"""

from __future__ import annotations

from audit.formats.detect import FORMATS, MAX_BYTES, detect_format, parse_file, parse_path
from audit.formats.records import (
    AnswerRecord,
    FormatError,
    LabelRecord,
    ParsedFile,
    PassageRecord,
)

__all__ = [
    "FORMATS",
    "MAX_BYTES",
    "AnswerRecord",
    "FormatError",
    "LabelRecord",
    "ParsedFile",
    "PassageRecord",
    "detect_format",
    "parse_file",
    "parse_path",
]
