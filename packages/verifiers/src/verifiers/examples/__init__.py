"""Small environments that ship with the SDK (registered as entry points)."""
