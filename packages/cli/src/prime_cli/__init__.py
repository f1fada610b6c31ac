"""`prime`: the command line for the environment hub."""

__version__ = "0.1.0"
