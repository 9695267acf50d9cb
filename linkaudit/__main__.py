"""``python -m linkaudit``."""

from .cli import run

run()
