"""SQL injection (CWE-89): run the artifact's query against an in-memory database with a canary table.

Values must travel as parameters and identifiers must be validated; the
oracle is what the query does, not what its text looks like: rows it should
not return, the ``vault`` canary leaking, or a quote in a value breaking the
statement.
"""

from __future__ import annotations

from typing import Any

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

# (id, (table, columns, where), counts-sql-errors, prior)
PAYLOADS: tuple[tuple[str, tuple[Any, list[Any], dict[str, Any]], bool, float], ...] = (
    ("value-or-true", ("items", [], {"name": "zz' OR '1'='1"}), True, 0.9),
    ("value-union", ("items", [], {"name": "zz' UNION SELECT token, token, token FROM vault --"}), True, 0.8),
    ("value-quote", ("items", [], {"name": "o'brien"}), True, 0.7),
    ("column-subquery", ("items", ["(SELECT token FROM vault) AS leak"], {}), False, 0.6),
    ("key-tautology", ("items", [], {"1=1 OR name": "zz"}), False, 0.6),
    ("table-union", ("items UNION SELECT token, token, token FROM vault", [], {}), False, 0.5),
)
CONTROL: tuple[str, list[str], dict[str, str]] = ("items", [], {"name": "alice"})


class SqlInjectionFamily(Family):
    name = "sql-injection"
    cwe = "CWE-89"
    severity = "critical"
    rationale = ("critical: attacker-controlled input rewrites the query, reading any table "
                 "(confidentiality) with no privileges, over whatever interface feeds the builder")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions:
            return []
        if not ctx.features.builds_sql_text and not ctx.declares(entry, "sql-injection"):
            return []
        boost = 0.1 if ctx.features.builds_sql_text else -0.2
        out = []
        for ident, args, _, prior in PAYLOADS:
            out.append(Variant(
                id=ident,
                spec=ProbeSpec("sqli", {"target": entry, "args": list(args)}),
                reproducer=f"{entry}({args[0]!r}, {args[1]!r}, {args[2]!r}) executed against a database "
                           "with a 'vault' canary table",
                control=ProbeSpec("sqli", {"target": entry, "args": list(CONTROL)}),
                prior=max(0.05, min(0.95, prior + boost)),
            ))
        return out

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return did_not_survive(trial)
        if trial.status != "ok":
            return MISS  # a clean ValueError is the contract's answer
        result = trial.result
        counts_errors = next(p[2] for p in PAYLOADS if p[0] == variant.id)
        sql, error = untrusted.text(result, "sql", limit=300), untrusted.optional_text(result, "sql_error")
        rows, vault = (0, False) if error else (untrusted.integer(result, "rows"), untrusted.flag(result, "vault"))
        if vault:
            return Verdict(True, 1.0, f"the canary token from table 'vault' came back; SQL: {sql}")
        if rows > 0:
            return Verdict(True, 1.0, f"{rows} rows matched a condition no row satisfies; SQL: {sql}")
        if not untrusted.flag(result, "vault_intact"):
            return Verdict(True, 1.0, "the vault table was altered by the query")
        if counts_errors and error:
            return Verdict(True, 0.9, f"a quote in a value broke the statement ({error}); SQL: {sql}")
        return Verdict(False, 0.2 if error else 0.0)

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        result = trial.result
        return (trial.status == "ok" and untrusted.optional_text(result, "sql_error") is None
                and untrusted.integer(result, "rows") == 1)
