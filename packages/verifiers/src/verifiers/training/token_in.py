"""`verifiers.training.token_in.TokenInClient`: the token-in chat client's training-side name.

The client lives in the client layer (`verifiers.token_in_client`), beside the clients it
builds on, so `ClientConfig(client_type="openai_chat_completions_token")` can build it without
an import cycle through the training package."""

from verifiers.token_in_client import TokenInClient

__all__ = ["TokenInClient"]
