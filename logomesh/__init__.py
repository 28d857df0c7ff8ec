"""LogoMesh: measure Contextual Debt in code written by AI coding agents.

The engine is importable without the UI: nothing under ``logomesh`` imports
``textual`` or ``rich`` at module level (``tests/test_import_hygiene.py``).
"""

__version__ = "0.1.0"
