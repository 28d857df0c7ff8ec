"""The injection screen's widgets: the setup form, the attempt view and the verdict log."""
