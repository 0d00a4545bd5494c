"""A reference solution: compare patterns and payees case-insensitively."""

from pathlib import Path

path = Path("tallybook/rules.py")
text = path.read_text(encoding="utf-8")
old = "        if rule.pattern in payee:\n"
if text.count(old) != 1:
    raise SystemExit(f"{path}: expected exactly one {old!r}")
path.write_text(text.replace(old, "        if rule.pattern.casefold() in payee.casefold():\n"), encoding="utf-8")
