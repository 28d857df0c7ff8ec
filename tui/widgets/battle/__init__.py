"""The live battle panels: setup form, MCTS tree, sandbox output, CIS assembly, status line."""
