"""Alembic's environment: migrations run on the connection the bot hands over (see bot/store/schema.py).

The caller has already begun the transaction and taken the migration lock on that connection, so every
revision of one upgrade runs inside it and two processes starting together upgrade one after the other.
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
