"""The battle spine: one battle from its request to its ledger entry.

``request`` (what a battle is asked to do) → ``preflight`` (may it start) →
``spine`` (purple agent, module check, sandbox, red agent, scoring; ``play_battle``
and ``run_battle``) → ``record`` (the typed ending and the result, inputs and
attributes the ledger signs). ``replay`` re-runs ``spine.judge_submission`` on a stored
entry; ``hidden_suite`` runs the task's hidden drivers and decides their
verdicts on the host.
"""
