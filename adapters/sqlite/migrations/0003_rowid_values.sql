-- checkpointkit SQLite schema, version 3: blobs and writes become ordinary
-- (rowid) tables with their primary key as a separate unique index.
--
-- Both hold encoded values, often kilobytes each. In a WITHOUT ROWID table
-- every row lives in the primary-key B-tree, whose interior cells carry
-- whole records: with 1 KB values only a few fit a page, the tree grows a
-- level every few-fold more rows, and each lookup walked (and compared)
-- more of them the deeper a thread's history was (List of 10 at 2,000
-- checkpoints cost 1.6 to 1.8 times List at 10; docs/benchmarks.md). In a
-- rowid table the key index holds only the key columns and the row is one
-- rowid probe away, so lookups cost the same at any depth.
CREATE TABLE blobs_v3 (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    value         BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);
INSERT INTO blobs_v3 (thread_id, checkpoint_ns, channel, version, kind, value)
    SELECT thread_id, checkpoint_ns, channel, version, kind, value FROM blobs;
DROP TABLE blobs;
ALTER TABLE blobs_v3 RENAME TO blobs;

CREATE TABLE writes_v3 (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    value         BLOB,
    task_path     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
INSERT INTO writes_v3 (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
    SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path FROM writes;
DROP TABLE writes;
ALTER TABLE writes_v3 RENAME TO writes;
