"""Invoice arithmetic."""
