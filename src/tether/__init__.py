"""tether: keep a project in step with its upstream release without losing its own changes."""

__version__ = "0.1.0"
