#!/usr/bin/env python3
"""Write store/db/schema/head_sqlite.json: what a migration run from empty leaves in a new
SQLite file (its statements and rows; the per-database values marked), which a new store file
is then made from instead of running every revision (store/db/schema/baked.py). Run
`.venv/bin/python scripts/bake_schema.py` after adding or changing a revision;
`tests/migrations/test_baked_schema.py` fails while the shipped file differs from what this
writes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store.db.schema.baked import BAKED, write  # noqa: E402
from store.db.schema.migrate import bake  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = bake(Path(folder))
    write(data)
    print(f"{BAKED}: revision {data['revision']}, {len(data['schema'])} statements, "
          f"{sum(len(t['rows']) for t in data['tables'].values())} rows, made per database: "
          + ", ".join(f"{t}.{c}" for t, cols in sorted(data["fresh"].items()) for c in cols))


if __name__ == "__main__":
    main()
