"""Build the application's settings from defaults and a .env file."""

from .envfile import load_env

DEFAULTS = {"HOST": "127.0.0.1", "PORT": "8000", "DEBUG": "false"}


def load_settings(path):
    """Read the .env file at *path* and return typed settings."""
    values = dict(DEFAULTS)
    values.update(load_env(path))
    return {
        "host": values["HOST"],
        "port": int(values["PORT"]),
        "debug": values["DEBUG"].strip().lower() in ("1", "true", "yes"),
    }
