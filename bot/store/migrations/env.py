"""Alembic's environment: migrations run on the connection the bot hands over (see bot/store/schema.py).

The caller holds the migration lock, so two processes starting together upgrade one after the other. On
SQLite it has begun the transaction (the lock is its write lock), and every revision runs inside it; on
PostgreSQL the connection comes without one and `begin_transaction` opens it, so that a revision may step
out of it to build an index concurrently (`bot/store/online_index.py`).
"""

from alembic import context
from sqlmodel import SQLModel

from bot.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("migrations run through `csb-bot db upgrade`, which passes a connection")
context.configure(connection=connection, target_metadata=SQLModel.metadata, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
