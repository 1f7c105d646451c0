"""Import formats: pure-Python parsers that turn uploaded files into answer records.

No Django here; the import service turns the records into models.
"""

from __future__ import annotations

from audit.formats.detect import FORMATS, MAX_BYTES, detect_format, parse_file
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
]
