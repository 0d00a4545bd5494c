"""Passes when payee rules match regardless of letter case and the first matching rule still wins."""

import os
import subprocess
import sys

RULES = """
market hall = food
Market = shopping
HALL = venues
"""
EXPECTED = {
    "MARKET HALL 0042": "food",
    "Market Hall": "food",
    "Supermarket Nord": "shopping",
    "Town hall fees": "venues",
    "Corner Bakery": "",
}


def check():
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True)
    if tests.returncode != 0:
        return "the project's tests fail:\n" + tests.stderr[-2000:]
    sys.path.insert(0, os.getcwd())
    from tallybook.rules import category_for, parse_rules

    rules = parse_rules(RULES)
    wrong = {payee: category_for(payee, rules) for payee in EXPECTED if category_for(payee, rules) != EXPECTED[payee]}
    if wrong:
        return f"categories differ from the expected ones {EXPECTED}: got {wrong}"
    return None


if __name__ == "__main__":
    problem = check()
    if problem:
        print(problem)
    sys.exit(1 if problem else 0)
