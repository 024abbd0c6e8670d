"""Network helpers shared by the API clients."""
