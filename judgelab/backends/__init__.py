"""Model backends: the litellm call path and its error classes (call), retries, prices (pricing), the
embedded local judge (local) and its HTTP server (server), and litellm Router judges (router)."""

__all__: list[str] = []
