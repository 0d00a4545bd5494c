"""A reference solution: the new field, a new ledger file version, and the upgrade step from the previous one."""

from pathlib import Path


def replace(path, old, new):
    target = Path(path)
    text = target.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise SystemExit(f"{path}: expected exactly one {old!r}")
    target.write_text(text.replace(old, new), encoding="utf-8")


replace("tallybook/ledger.py", '    account: str = ""\n', '    account: str = ""\n    memo: str = ""\n')
replace("tallybook/upgrade.py", "CURRENT_VERSION = 2\n", "CURRENT_VERSION = 3\n")
replace("tallybook/upgrade.py", '    1: {"account": ""},\n', '    1: {"account": ""},\n    2: {"memo": ""},\n')
