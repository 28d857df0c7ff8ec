"""Talking to purple (code generating) agents: the A2A client, mock and LLM servers."""
