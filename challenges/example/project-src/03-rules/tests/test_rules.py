import datetime
import unittest

from tallybook.ledger import Transaction
from tallybook.rules import Rule, categorise, category_for, parse_rules

RULES = """
# groceries first
Corner Bakery = food
Bakery = treats
Lakeside = books
"""


class RulesTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_rules(RULES)[0], Rule("Corner Bakery", "food"))
        with self.assertRaises(ValueError):
            parse_rules("no separator here")

    def test_first_match_wins(self):
        rules = parse_rules(RULES)
        self.assertEqual(category_for("Corner Bakery 12", rules), "food")
        self.assertEqual(category_for("Hill Bakery", rules), "treats")
        self.assertEqual(category_for("Gas station", rules), "")

    def test_categorise_keeps_existing(self):
        day = datetime.date(2024, 3, 1)
        done = categorise(
            [Transaction(day, -100, "Lakeside Books"), Transaction(day, -200, "Lakeside Books", "gifts")],
            parse_rules(RULES),
        )
        self.assertEqual([t.category for t in done], ["books", "gifts"])


if __name__ == "__main__":
    unittest.main()
