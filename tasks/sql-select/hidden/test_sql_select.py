"""Judge tests for build_select: run the built queries against a real sqlite3 database."""

import sqlite3
import unittest

from solution import build_select

ROWS = [
    (1, "alice", 30, "first", b"\x00\x01"),
    (2, "bob", 25, "second", b"\x02"),
    (3, "carol", 30, "third", b"\x03"),
    (4, "x' OR '1'='1", 99, "fourth", b"\x04"),
]

BAD_IDENTIFIERS = [
    "", "1abc", "a-b", "a b", "a.b", "users;", "users; DROP TABLE users", "users--", 'na"me', "na'me",
    "users\n", "\nusers", "naïve", "ｕsers", "name\x00", "*", "a/*c*/", None, 3, b"users",
]


class SelectCase(unittest.TestCase):
    def setUp(self):
        self.db = sqlite3.connect(":memory:")
        self.db.execute('CREATE TABLE users (id INTEGER, name TEXT, age INTEGER, "order" TEXT, blob BLOB)')
        self.db.executemany("INSERT INTO users VALUES (?, ?, ?, ?, ?)", ROWS)
        self.db.execute('CREATE TABLE "group" (id INTEGER, "select" TEXT)')
        self.db.execute('INSERT INTO "group" VALUES (1, \'kw\')')

    def tearDown(self):
        self.db.close()

    def run_query(self, table, columns, where):
        sql, params = build_select(table, columns, where)
        self.assertIsInstance(params, tuple)
        return self.db.execute(sql, params).fetchall()


class TestQueries(SelectCase):
    def test_empty_columns_select_star(self):
        rows = self.run_query("users", [], {})
        self.assertEqual(sorted(rows), sorted(ROWS))

    def test_columns_in_given_order(self):
        rows = self.run_query("users", ["name", "id"], {})
        self.assertEqual(sorted(rows, key=lambda r: r[1]), [(r[1], r[0]) for r in ROWS])

    def test_single_condition(self):
        self.assertEqual(self.run_query("users", ["id"], {"name": "bob"}), [(2,)])

    def test_conditions_are_anded(self):
        self.assertEqual(sorted(self.run_query("users", ["id"], {"age": 30})), [(1,), (3,)])
        self.assertEqual(self.run_query("users", ["id"], {"age": 30, "name": "carol"}), [(3,)])
        self.assertEqual(self.run_query("users", ["id"], {"age": 25, "name": "carol"}), [])

    def test_params_follow_insertion_order(self):
        sql, params = build_select("users", ["id"], {"name": "carol", "age": 30, "id": 3})
        self.assertEqual(params, ("carol", 30, 3))
        self.assertEqual(sql.count("?"), 3)
        self.assertLess(sql.index("name"), sql.index("age"))
        self.assertEqual(self.db.execute(sql, params).fetchall(), [(3,)])

    def test_empty_where_has_no_where_clause(self):
        sql, params = build_select("users", ["id"], {})
        self.assertEqual(params, ())
        self.assertNotIn("WHERE", sql.upper())
        self.assertNotIn("?", sql)

    def test_keywords_as_identifiers(self):
        self.assertEqual(self.run_query("users", ["order"], {"id": 2}), [("second",)])
        self.assertEqual(self.run_query("users", ["id"], {"order": "third"}), [(3,)])
        self.assertEqual(self.run_query("group", ["select"], {"id": 1}), [("kw",)])

    def test_value_types_bind_correctly(self):
        self.assertEqual(self.run_query("users", ["id"], {"blob": b"\x00\x01"}), [(1,)])
        self.assertEqual(self.run_query("users", ["name"], {"age": 25.0}), [("bob",)])


class TestInjection(SelectCase):
    def test_quote_payload_in_value_matches_literally(self):
        payload = "x' OR '1'='1"
        sql, params = build_select("users", ["id"], {"name": payload})
        self.assertNotIn(payload, sql)
        self.assertNotIn("'", sql)
        self.assertEqual(self.db.execute(sql, params).fetchall(), [(4,)])

    def test_values_never_in_sql_text(self):
        where = {"name": "robert'); DROP TABLE users;--", "age": 424242, "order": '" OR 1=1 --'}
        sql, params = build_select("users", [], where)
        for fragment in ("robert", "DROP", "424242", "OR 1=1", "--", ";"):
            self.assertNotIn(fragment, sql)
        self.assertEqual(params, tuple(where.values()))
        self.assertEqual(self.db.execute(sql, params).fetchall(), [])
        self.assertEqual(len(self.db.execute("SELECT * FROM users").fetchall()), 4)

    def test_bad_table_names_rejected(self):
        for bad in BAD_IDENTIFIERS:
            with self.assertRaises(ValueError, msg=repr(bad)):
                build_select(bad, [], {})

    def test_bad_column_names_rejected(self):
        for bad in BAD_IDENTIFIERS + ["name FROM users --", "id, name"]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                build_select("users", ["id", bad], {})

    def test_bad_where_keys_rejected(self):
        for bad in BAD_IDENTIFIERS + ["1=1 OR name", "name = 'a' OR 1"]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                build_select("users", [], {"id": 1, bad: "x"})

    def test_output_is_one_statement(self):
        sql, params = build_select("users", ["id", "name"], {"id": 1})
        self.assertTrue(sql.lstrip().upper().startswith("SELECT"))
        self.assertTrue(sqlite3.complete_statement(sql + ";"))
        self.assertNotIn(";", sql.rstrip().rstrip(";"))
        self.assertEqual(self.db.execute(sql, params).fetchall(), [(1, "alice")])

    def test_inputs_are_not_mutated(self):
        columns = ["id", "name"]
        where = {"age": 30}
        build_select("users", columns, where)
        self.assertEqual(columns, ["id", "name"])
        self.assertEqual(where, {"age": 30})


if __name__ == "__main__":
    unittest.main()
