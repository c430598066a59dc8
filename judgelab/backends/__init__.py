"""Model backends: the litellm call path, retries, the embedded local judge and its HTTP server."""
