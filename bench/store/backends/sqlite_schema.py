"""The SQLite store's tables, and bringing an older store's index up to them."""

from __future__ import annotations

from .transactions import Database

__all__ = ["OBJECT_COLUMNS", "create_schema"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    hex TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    is_document INTEGER NOT NULL,
    data BLOB,                      -- NULL: the bytes are in a pack, or else a loose file
    created REAL NOT NULL,
    pack TEXT,                      -- the pack holding the bytes, at pack_offset
    pack_offset INTEGER
);                                  -- a rowid table: SQLite keeps large rows out of the key b-tree this way
CREATE TABLE IF NOT EXISTS refs (
    name TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    updated REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS action_results (
    key TEXT NOT NULL,
    result TEXT NOT NULL,
    recorded REAL NOT NULL,
    PRIMARY KEY (key, result)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS produced (
    output TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (output, result)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    holder BLOB NOT NULL            -- who computes the key now (bench.store.claims)
) WITHOUT ROWID;
"""
# Stores made before packs existed lack the two pack columns; the index needs them.
_PACK_COLUMNS = ("ALTER TABLE objects ADD COLUMN pack TEXT", "ALTER TABLE objects ADD COLUMN pack_offset INTEGER")
# The columns of an objects row, in the order every insert gives them.
OBJECT_COLUMNS = "hex, size, is_document, data, created, pack, pack_offset"


def create_schema(db: Database) -> None:
    """Make the tables a store needs, adding what an older store's index lacks."""
    db.connection.executescript(_SCHEMA)
    if not _has_pack_columns(db):
        with db.transaction():
            for statement in _PACK_COLUMNS if not _has_pack_columns(db) else ():
                db.connection.execute(statement)


def _has_pack_columns(db: Database) -> bool:
    return "pack" in {row[1] for row in db.connection.execute("PRAGMA table_info(objects)")}
