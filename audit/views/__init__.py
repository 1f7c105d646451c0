"""Views by area: sets and imports, answers, (later) review, adjudication and reports."""
