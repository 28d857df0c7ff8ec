"""The green (judge) agent as an A2A server an AgentBeats gateway can call."""
