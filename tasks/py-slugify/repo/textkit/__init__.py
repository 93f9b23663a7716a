"""Text helpers for the blog engine."""
