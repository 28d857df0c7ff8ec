"""``python -m logomesh`` runs the CLI."""

from logomesh.cli import main

main()
