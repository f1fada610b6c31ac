"""The registry's operations, one module per concern; ``prime_hub.service.Hub`` joins them."""
