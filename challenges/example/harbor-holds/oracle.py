"""A reference answer, grounded in the project's issue 14 and ADR 2."""

from pathlib import Path

Path("ANSWER.md").write_text(
    "Harbor marks pending card authorisations (holds) with Status H. A hold is not money that moved: the bank\n"
    "posts the real charge days later as a new row with another reference, so importing both counted each\n"
    "purchase twice.\n\n"
    "Counted twice in March 2024: 45.10 + 12.00 + 38.75 = 95.85\n",
    encoding="utf-8",
)
