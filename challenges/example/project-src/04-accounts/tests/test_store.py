import datetime
import os
import tempfile
import unittest

from tallybook import store
from tallybook.ledger import Transaction

FIRST_LAYOUT = """# tallybook ledger v1
date,amount,payee,category
2023-11-30,-12.00,Corner Bakery,food
"""


class StoreTest(unittest.TestCase):
    def setUp(self):
        handle, self.path = tempfile.mkstemp(suffix=".csv")
        os.close(handle)
        self.addCleanup(os.remove, self.path)

    def write(self, text):
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(text)

    def test_round_trip(self):
        kept = [
            Transaction(datetime.date(2024, 1, 3), -1999, "Corner Bakery", "food", "joint"),
            Transaction(datetime.date(2024, 1, 4), 250000, "Salary", "income", "joint"),
        ]
        store.dump(kept, self.path)
        self.assertEqual(store.load(self.path), kept)

    def test_reads_the_first_layout(self):
        self.write(FIRST_LAYOUT)
        (only,) = store.load(self.path)
        self.assertEqual((only.payee, only.amount, only.account), ("Corner Bakery", -1200, ""))

    def test_refuses_other_files(self):
        self.write("date,amount\n")
        with self.assertRaises(store.LedgerFormatError):
            store.load(self.path)

    def test_refuses_newer_files(self):
        self.write("# tallybook ledger v99\ndate\n")
        with self.assertRaises(store.LedgerFormatError):
            store.load(self.path)


if __name__ == "__main__":
    unittest.main()
