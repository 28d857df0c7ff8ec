"""Hidden drivers for build_select: the built queries run against a real sqlite3 database.

The SQL text may quote identifiers or not, so drivers record what it does
rather than how it reads: the params, the rows the query selects (sorted, as
the contract leaves row order open), and counts of characters that only an
injected value could put in the text. The host compares the record with the
reference solution's; no expected value appears here.
"""

import sqlite3

from observe import raised, see
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

# Valid identifiers go through the same guards, so the harness does not tell which calls must fail.
GOOD_IDENTIFIERS = ["users", "_x", "Name_2", "order", "a" * 64, "Z"]


def database():
    db = sqlite3.connect(":memory:")
    db.execute('CREATE TABLE users (id INTEGER, name TEXT, age INTEGER, "order" TEXT, blob BLOB)')
    db.executemany("INSERT INTO users VALUES (?, ?, ?, ?, ?)", ROWS)
    db.execute('CREATE TABLE "group" (id INTEGER, "select" TEXT)')
    db.execute("INSERT INTO \"group\" VALUES (1, 'kw')")
    return db


def rows(db, sql, params):
    return sorted(db.execute(sql, params).fetchall())


def query(db, table, columns, where):
    """Record the params and the rows the built query selects; hand back the SQL text."""
    sql, params = build_select(table, columns, where)
    see(params)
    see(rows(db, sql, params))
    return sql


def counts(sql, *fragments):
    """How often each fragment occurs in the SQL text (str's own count, whatever the text's class)."""
    return [str.count(sql, fragment) for fragment in fragments]


def outcome(table, columns, where):
    """Record the params of a valid call, or ValueError (any subclass), or the nearest builtin of anything else."""
    with raised(ValueError):
        see(build_select(table, columns, where)[1])


class TestQueries:
    def test_empty_columns_select_star(self):
        db = database()
        query(db, "users", [], {})
        query(db, "group", [], {})

    def test_columns_in_given_order(self):
        db = database()
        query(db, "users", ["name", "id"], {})
        query(db, "users", ["age", "order", "name"], {"id": 4})

    def test_single_condition(self):
        db = database()
        query(db, "users", ["id"], {"name": "bob"})
        query(db, "users", ["name"], {"id": 5})

    def test_conditions_are_anded(self):
        db = database()
        query(db, "users", ["id"], {"age": 30})
        query(db, "users", ["id"], {"age": 30, "name": "carol"})
        query(db, "users", ["id"], {"age": 25, "name": "carol"})

    def test_params_follow_insertion_order(self):
        db = database()
        where = {"name": "carol", "age": 30, "id": 3}
        sql = query(db, "users", ["id"], where)
        see(counts(sql, "?"))
        see(sorted(where, key=lambda key: str.rfind(sql, key)))  # the keys in the order the text names them last
        query(db, "users", ["name"], {"id": 2, "age": 25})

    def test_empty_where_has_no_where_clause(self):
        db = database()
        sql = query(db, "users", ["id"], {})
        see(counts(str.upper(sql), "WHERE", "?"))

    def test_keywords_as_identifiers(self):
        db = database()
        query(db, "users", ["order"], {"id": 2})
        query(db, "users", ["id"], {"order": "third"})
        query(db, "group", ["select"], {"id": 1})

    def test_value_types_bind_correctly(self):
        db = database()
        query(db, "users", ["id"], {"blob": b"\x00\x01"})
        query(db, "users", ["name"], {"age": 25.0})
        query(db, "users", ["id"], {"name": None})


class TestInjection:
    def test_quote_payload_in_value_matches_literally(self):
        db = database()
        payload = "x' OR '1'='1"
        sql = query(db, "users", ["id"], {"name": payload})
        see(counts(sql, payload, "'"))

    def test_values_never_in_sql_text(self):
        db = database()
        where = {"name": "robert'); DROP TABLE users;--", "age": 424242, "order": '" OR 1=1 --'}
        sql = query(db, "users", [], where)
        see(counts(sql, "robert", "DROP", "424242", "OR 1=1", "--", ";"))
        see(rows(db, "SELECT id FROM users", ()))

    def test_bad_table_names_rejected(self):
        for name in BAD_IDENTIFIERS[:10] + GOOD_IDENTIFIERS + BAD_IDENTIFIERS[10:]:
            outcome(name, [], {})

    def test_bad_column_names_rejected(self):
        for name in BAD_IDENTIFIERS[:10] + GOOD_IDENTIFIERS + BAD_IDENTIFIERS[10:] + ["name FROM users --", "id, name"]:
            outcome("users", ["id", name], {})

    def test_bad_where_keys_rejected(self):
        for name in BAD_IDENTIFIERS[:10] + GOOD_IDENTIFIERS + BAD_IDENTIFIERS[10:] + ["1=1 OR name", "name = 'a' OR 1"]:
            outcome("users", [], {"id": 1, name: "x"})

    def test_output_is_one_statement(self):
        db = database()
        sql = query(db, "users", ["id", "name"], {"id": 1})
        see(str.split(str.upper(sql))[:1])
        see(counts(str.rstrip(str.rstrip(sql), ";"), ";"))

    def test_inputs_are_not_mutated(self):
        db = database()
        columns = ["id", "name"]
        where = {"age": 30}
        query(db, "users", columns, where)
        see(columns)
        see(where)
