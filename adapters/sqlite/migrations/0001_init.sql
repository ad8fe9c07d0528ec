-- checkpointkit SQLite schema, version 1: the three tables.
-- Every table is WITHOUT ROWID: rows are stored in primary-key order, which
-- is exactly the order the saver reads them in.

-- One row per checkpoint. "checkpoint" is the checkpoint without its
-- channel values (MessagePack); "metadata" is JSON text.
CREATE TABLE checkpoints (
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL,
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    checkpoint           BLOB NOT NULL,
    metadata             TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID;

-- Channel values, stored once per (thread, namespace, channel, version).
-- kind is 'value' (value holds the encoded value) or 'empty' (the channel
-- had no value at that version).
CREATE TABLE blobs (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    value         BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
) WITHOUT ROWID;

-- Pending writes, keyed as the contract says. idx is spec.WriteIndex:
-- negative for the special channels.
CREATE TABLE writes (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    value         BLOB,
    task_path     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
