"""``python -m store`` runs the transcript-store command line."""

from __future__ import annotations

from store.cli.main import main

main()
