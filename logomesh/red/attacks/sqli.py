"""SQL injection (CWE-89): run the artifact's query against an in-memory database with a canary table.

Values must travel as parameters and identifiers must be validated; the
oracle is what the query does, not what its text looks like: rows it should
not return, the ``vault`` canary leaking, or a quote in a value breaking the
statement.
"""

from __future__ import annotations

import random
import string
from typing import Any

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

# (id, (table, columns, where), counts-sql-errors, prior). In the texts, drawn per battle (``payloads``): {w} a
# word no row holds, {k} a key, {n} a digit, {t} the canary table's name; code that escapes one known payload,
# or looks for the word "vault", has nothing fixed to look for.
TEMPLATES: tuple[tuple[str, tuple[Any, list[Any], dict[str, Any]], bool, float], ...] = (
    ("value-or-true", ("items", [], {"name": "{w}' OR '{k}'='{k}"}), True, 0.9),
    ("value-union", ("items", [], {"name": "{w}' UNION SELECT token, token, token FROM {t} --"}), True, 0.8),
    ("value-quote", ("items", [], {"name": "{w}'{k}"}), True, 0.7),
    ("column-subquery", ("items", ["(SELECT token FROM {t}) AS leak"], {}), False, 0.6),
    ("key-tautology", ("items", [], {"{n}={n} OR name": "{w}"}), False, 0.6),
    ("table-union", ("items UNION SELECT token, token, token FROM {t}", [], {}), False, 0.5),
)
COUNTS_ERRORS = {ident: counts for ident, _, counts, _ in TEMPLATES}
CONTROL: tuple[str, list[str], dict[str, str]] = ("items", [], {"name": "alice"})


def _word(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(low, high)))


def payloads(seed: int) -> list[tuple[str, list[Any], str, float]]:
    """Each template's arguments for the battle seeded ``seed``, with the canary table's name: (id, [table,
    columns, where], canary table, prior)."""
    rng = random.Random(f"sql-injection:{seed}")
    words = {"w": "zz" + _word(rng, 3, 6), "k": _word(rng, 1, 4), "n": str(rng.randint(1, 9)),
             "t": _word(rng, 5, 8)}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**words)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {fill(k): fill(v) for k, v in value.items()}
        return value

    return [(ident, fill(list(args)), words["t"], prior) for ident, args, _, prior in TEMPLATES]


class SqlInjectionFamily(Family):
    name = "sql-injection"
    cwe = "CWE-89"
    severity = "critical"
    rationale = ("critical: attacker-controlled input rewrites the query, reading any table "
                 "(confidentiality) with no privileges, over whatever interface feeds the builder")
    probe = "sqli"
    markers = ("target", "args", "vault", "sql", "sql_error", "rows", "vault_intact")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions:
            return []
        if not ctx.features.builds_sql_text and not ctx.declares(entry, "sql-injection"):
            return []
        boost = 0.1 if ctx.features.builds_sql_text else -0.2
        out = []
        for ident, args, canary, prior in payloads(ctx.seed):
            out.append(Variant(
                id=ident,
                spec=ProbeSpec("sqli", {"target": entry, "args": args, "vault": canary}),
                reproducer=f"{entry}({args[0]!r}, {args[1]!r}, {args[2]!r}) executed against a database "
                           f"with a {canary!r} canary table",
                control=ProbeSpec("sqli", {"target": entry, "args": list(CONTROL), "vault": canary}),
                prior=max(0.05, min(0.95, prior + boost)),
            ))
        return out

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return did_not_survive(trial)
        if trial.status != "ok":
            return MISS  # a clean ValueError is the contract's answer
        result = trial.result
        counts_errors = COUNTS_ERRORS[variant.id]
        sql, error = untrusted.text(result, "sql", limit=300), untrusted.optional_text(result, "sql_error")
        rows, vault = (0, False) if error else (untrusted.integer(result, "rows"), untrusted.flag(result, "vault"))
        if vault:
            table = str(variant.spec.args.get("vault", "vault"))
            return Verdict(True, 1.0, f"the canary token from table {table!r} came back; SQL: {sql}")
        if rows > 0:
            return Verdict(True, 1.0, f"{rows} rows matched a condition no row satisfies; SQL: {sql}")
        if not untrusted.flag(result, "vault_intact"):
            return Verdict(True, 1.0, "the canary table was altered by the query")
        if counts_errors and error:
            return Verdict(True, 0.9, f"a quote in a value broke the statement ({error}); SQL: {sql}")
        return Verdict(False, 0.2 if error else 0.0)

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        result = trial.result
        return (trial.status == "ok" and untrusted.optional_text(result, "sql_error") is None
                and untrusted.integer(result, "rows") == 1)
