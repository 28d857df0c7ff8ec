"""Talking to purple (code generating) agents: the A2A client, mock and LLM servers."""

DEFAULT_PURPLE_TIMEOUT_S = 300.0
"""How long a battle waits for a purple agent's answer by default: the LLM agent's own default ``--timeout``, so
a model on a CPU gets the time its agent gives it (the battle sends the deadline, and the agent fits inside it)."""
