"""Application configuration: defaults overridden by a .env file."""
