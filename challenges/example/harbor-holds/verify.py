"""Passes when ANSWER.md names card holds as the reason and gives the total that was counted twice."""

import re
import sys
from pathlib import Path


def main():
    answer = Path("ANSWER.md")
    if not answer.is_file():
        print("ANSWER.md is missing from the repository root")
        return 1
    text = answer.read_text(encoding="utf-8", errors="replace")
    failures = []
    if not re.search(r"(?<![\d.,])95\.85(?!\d)", text):
        failures.append("the total counted twice (a plain decimal amount) is not the recorded one")
    if not re.search(r"\bholds?\b|\bauthori[sz]ations?\b", text, re.IGNORECASE):
        failures.append("the reason does not say the dropped rows are card holds (pending authorisations)")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
