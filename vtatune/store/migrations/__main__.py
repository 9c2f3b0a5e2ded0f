"""``python -m vtatune.store.migrations new "MESSAGE"``: write the next revision file.

It holds Alembic's operations for the difference between ``store.models`` and the schema at
the head revision (found by migrating an empty in-memory SQLite database), under the id
``NNNN_vtatune_<this version>``. ``python -m vtatune.store.migrations check`` exits 1 while the
models and the revisions differ (the test suite runs the same comparison).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from vtatune.store import migrations

TEMPLATE = '''"""{message}

Revision ID: {revision}
Revises: {down}
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "{revision}"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
{upgrade}


def downgrade() -> None:
    raise NotImplementedError("vtatune never drops its results")
'''


def differences(metadata: Any = None, versions: Path = migrations.VERSIONS) -> Any:
    """Alembic's ``UpgradeOps`` from the head revision's schema to ``metadata`` (the models)."""
    from alembic.autogenerate import produce_migrations
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    if metadata is None:
        from vtatune.store.models import Base

        metadata = Base.metadata
    engine = create_engine("sqlite://")
    with engine.begin() as conn:
        migrations.upgrade(conn, versions)
        ctx = MigrationContext.configure(conn, opts={
            "version_table": migrations.VERSION_TABLE,
            "include_name": lambda name, kind, parent: kind != "table" or name.startswith("vt_")
                                                        and name != migrations.VERSION_TABLE})
        return produce_migrations(ctx, metadata).upgrade_ops


def new_revision(message: str, metadata: Any = None,
                 versions: Path = migrations.VERSIONS) -> Path | None:
    """Write the next revision for ``metadata``'s difference from the head; None if none."""
    from alembic.autogenerate import render_python_code

    from vtatune import __version__

    ops = differences(metadata, versions)
    if ops.is_empty():
        return None
    body = render_python_code(ops, migration_context=None).splitlines()
    body = [line for line in body if not line.strip().startswith("# ###")]
    chain = migrations.known(versions)
    number = len(chain) + 1
    revision = f"{number:04d}_vtatune_{__version__}"
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40] or "change"
    path = versions / f"{number:04d}_{slug}.py"
    path.write_text(TEMPLATE.format(message=message, revision=revision, down=chain[-1],
                                    upgrade="\n".join(body)))
    migrations._chain.cache_clear()
    return path


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "new":
        path = new_revision(argv[1])
        print(f"wrote {path}" if path else "the models match the head revision: nothing to do")
        return 0
    if argv == ["check"]:
        ops = differences()
        if ops.is_empty():
            print(f"the models match the head revision {migrations.head()}")
            return 0
        print(f"the models differ from the head revision {migrations.head()}: "
              f"{ops.as_diffs()}")
        return 1
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
