"""The battle spine: one battle from its request to its ledger entry.

``request`` (what a battle is asked to do) → ``preflight`` (may it start) →
``spine`` (purple agent, module check, sandbox, red agent, scoring; ``play_battle``
and ``run_battle``) → ``record`` (the typed ending and the result, inputs and
attributes the ledger signs). ``replay`` re-runs ``spine.judge_submission`` on a stored
entry. What the layers below need lives below: the per-run context in
``logomesh/context.py``, the module check and the hidden suite in
``logomesh/tasks/``.
"""
