"""The injection battle (issue 38): payloads planted in what a coding agent reads, judged by what its code does.

``objectives.py`` and ``oracles.py`` hold what an injection asks for and how the answer is judged (by running
the code in the sandbox, decided on the host: ``docs/injection.md``, "Oracles"); the search lives beside them.
"""
