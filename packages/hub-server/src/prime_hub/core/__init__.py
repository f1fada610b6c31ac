"""The registry's services, one module per concern, over one shared `context.HubContext`;
``prime_hub.service.Hub`` builds them. The upload rules are pure functions
(`upload_rules`)."""
