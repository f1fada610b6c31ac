"""prime-hub: a self-hostable registry for environment packages (PEP 503/691/658 index, legacy upload)."""

__version__ = "0.1.0"
