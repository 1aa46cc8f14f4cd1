"""Exits while it is imported: CRASH."""

import sys

sys.exit(7)
