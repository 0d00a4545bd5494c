import datetime
import os
import tempfile
import unittest

from tallybook import store
from tallybook.ledger import Transaction


class StoreTest(unittest.TestCase):
    def setUp(self):
        handle, self.path = tempfile.mkstemp(suffix=".csv")
        os.close(handle)
        self.addCleanup(os.remove, self.path)

    def test_round_trip(self):
        kept = [
            Transaction(datetime.date(2024, 1, 3), -1999, "Corner Bakery", "food"),
            Transaction(datetime.date(2024, 1, 4), 250000, "Salary", "income"),
        ]
        store.dump(kept, self.path)
        self.assertEqual(store.load(self.path), kept)

    def test_refuses_other_files(self):
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write("date,amount\n")
        with self.assertRaises(store.LedgerFormatError):
            store.load(self.path)


if __name__ == "__main__":
    unittest.main()
