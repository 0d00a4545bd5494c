"""Passes when transactions carry a memo through a ledger file, as a new file version older files upgrade to."""

import dataclasses
import datetime
import os
import subprocess
import sys
import tempfile

PREVIOUS_LAYOUT = """# tallybook ledger v2
date,amount,payee,category,account
2024-02-10,-23.40,Corner Bakery,food,joint
"""


def check():
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True)
    if tests.returncode != 0:
        return "the project's tests fail:\n" + tests.stderr[-2000:]
    sys.path.insert(0, os.getcwd())
    from tallybook import store
    from tallybook.ledger import Transaction

    fields = {field.name: field for field in dataclasses.fields(Transaction)}
    if "memo" not in fields or fields["memo"].default != "":
        return "Transaction has no memo field defaulting to an empty string"
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "ledger.csv")
        kept = [Transaction(datetime.date(2024, 3, 1), -420, "Corner Bakery", "food", "joint", memo="birthday; cake")]
        store.dump(kept, path)
        if store.load(path) != kept:
            return "a memo does not survive saving and loading a ledger"
        with open(path, encoding="utf-8") as handle:
            first = handle.readline().rstrip("\r\n")
        if first != "# tallybook ledger v3":
            return f"a ledger with memos still declares the old layout: {first!r}"
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(PREVIOUS_LAYOUT)
        try:
            (old,) = store.load(path)
        except Exception as exc:
            return f"an existing version 2 ledger no longer loads: {exc}"
        if (old.payee, old.amount, old.account, old.memo) != ("Corner Bakery", -2340, "joint", ""):
            return f"an existing version 2 ledger loads wrongly: {old}"
    return None


if __name__ == "__main__":
    problem = check()
    if problem:
        print(problem)
    sys.exit(1 if problem else 0)
