"""Small descriptive statistics helpers."""
