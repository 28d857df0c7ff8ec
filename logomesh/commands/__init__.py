"""One module per command group; ``logomesh.cli`` mounts them.

Each module keeps its heavy imports inside the command functions so that
``logomesh --help`` stays fast.
"""
