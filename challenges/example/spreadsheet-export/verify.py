"""Passes when `python3 -m tallybook export LEDGER OUT` writes CSV the household spreadsheet opens correctly."""

import csv
import io
import os
import subprocess
import sys
import tempfile

LEDGER = """# tallybook ledger v2
date,amount,payee,category,account
2024-03-02,-1234.50,Market Hall,food,joint
2024-03-05,2500.00,Payroll,income,joint
2024-03-07,-4.20,Corner Bakery,,joint
"""
HEADER = ["date", "payee", "category", "amount"]
ROWS = [
    ["2024-03-02", "Market Hall", "food", "-1234,50"],
    ["2024-03-05", "Payroll", "income", "2500,00"],
    ["2024-03-07", "Corner Bakery", "", "-4,20"],
]


def check():
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True)
    if tests.returncode != 0:
        return "the project's tests fail:\n" + tests.stderr[-2000:]
    with tempfile.TemporaryDirectory() as scratch:
        ledger, out = os.path.join(scratch, "ledger.csv"), os.path.join(scratch, "out.csv")
        with open(ledger, "w", encoding="utf-8") as handle:
            handle.write(LEDGER)
        done = subprocess.run(
            [sys.executable, "-m", "tallybook", "export", ledger, out], capture_output=True, text=True
        )
        if done.returncode != 0:
            return f"the export command failed ({done.returncode}):\n{done.stderr[-2000:]}"
        if not os.path.isfile(out):
            return "the export command wrote no file"
        with open(out, encoding="utf-8-sig", newline="") as handle:
            rows = [row for row in csv.reader(io.StringIO(handle.read()), delimiter=";") if row]
    if not rows or [cell.strip().lower() for cell in rows[0]] != HEADER:
        return f"the header row is not {HEADER} in a form the spreadsheet reads: {rows[:1]}"
    if rows[1:] != ROWS:
        return f"the rows are not {ROWS} in a form the spreadsheet reads: {rows[1:]}"
    return None


if __name__ == "__main__":
    problem = check()
    if problem:
        print(problem)
    sys.exit(1 if problem else 0)
