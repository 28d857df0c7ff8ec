"""The Textual battle console. Only ``logomesh console`` imports this, lazily."""
