"""Build task libraries from other benchmarks (``logomesh tasks import``).

``check_drivers`` turns an assert-based ``check(candidate)`` into observation
drivers (no expected value enters the sandbox); ``humaneval`` writes one task
folder per HumanEval problem.
"""
