import datetime
import unittest

from tallybook.importer import import_rows

HARBOR = """Date,Description,Amount,Status
03/01/2024,CORNER BAKERY,-4.20,P
03/02/2024,CITY WATER,-31.00,H
03/02/2024,PAYROLL,2500.00,P
"""

NORTHWIND = """Booking date;Counterparty;Amount
2024-03-04;Lakeside Books;18.90
2024-03-05;Refund Lakeside Books;-18.90
"""


class ImporterTest(unittest.TestCase):
    def test_harbor(self):
        rows = import_rows(HARBOR, "harbor")
        self.assertEqual([t.payee for t in rows], ["CORNER BAKERY", "PAYROLL"])
        self.assertEqual(rows[0].date, datetime.date(2024, 3, 1))
        self.assertEqual(rows[0].amount, -420)

    def test_northwind(self):
        rows = import_rows(NORTHWIND, "northwind")
        self.assertEqual([t.amount for t in rows], [-1890, 1890])
        self.assertEqual(rows[1].date, datetime.date(2024, 3, 5))


if __name__ == "__main__":
    unittest.main()
