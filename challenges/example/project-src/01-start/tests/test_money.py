import unittest

from tallybook.money import format_amount, parse_amount


class MoneyTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_amount("12.34"), 1234)
        self.assertEqual(parse_amount("-0.5"), -50)
        self.assertEqual(parse_amount(" 7 "), 700)

    def test_parse_refuses_garbage(self):
        for text in ("", "abc", "1.234", "--1"):
            with self.assertRaises(ValueError):
                parse_amount(text)

    def test_format(self):
        self.assertEqual(format_amount(1234), "12.34")
        self.assertEqual(format_amount(-50), "-0.50")
        self.assertEqual(format_amount(0), "0.00")

    def test_round_trip(self):
        for cents in (-100001, -1, 0, 5, 99999):
            self.assertEqual(parse_amount(format_amount(cents)), cents)


if __name__ == "__main__":
    unittest.main()
