import datetime
import unittest

from tallybook.ledger import Transaction
from tallybook.report import monthly_totals, render


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.transactions = [
            Transaction(datetime.date(2024, 2, 28), -500, "Corner Bakery", "food"),
            Transaction(datetime.date(2024, 3, 1), -420, "Corner Bakery", "food"),
            Transaction(datetime.date(2024, 3, 2), -3100, "City Water", "house"),
            Transaction(datetime.date(2024, 3, 2), 250000, "Payroll"),
        ]

    def test_totals(self):
        totals = monthly_totals(self.transactions)
        self.assertEqual(totals["2024-02"], {"food": -500})
        self.assertEqual(totals["2024-03"], {"food": -420, "house": -3100, "": 250000})

    def test_render_lists_biggest_spending_first(self):
        text = render(monthly_totals(self.transactions))
        lines = text.splitlines()
        self.assertEqual(lines[0], "2024-02")
        self.assertIn("house", lines[3])
        self.assertIn("(none)", lines[-1])


if __name__ == "__main__":
    unittest.main()
