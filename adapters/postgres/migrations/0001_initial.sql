-- 0001: the three tables of the saver.
--
-- Every text key is COLLATE "C" so that ordering and comparisons are
-- byte-wise, as the contract requires, whatever the database's locale.

CREATE TABLE {{schema}}.checkpoints (
    thread_id            text  COLLATE "C" NOT NULL,
    checkpoint_ns        text  COLLATE "C" NOT NULL,
    checkpoint_id        text  COLLATE "C" NOT NULL,
    parent_checkpoint_id text  COLLATE "C",
    -- msgpack record: format version, timestamp, channel versions,
    -- versions seen, updated channels.
    checkpoint           bytea NOT NULL,
    -- channel_versions again, as two parallel arrays, so that the values a
    -- checkpoint references can be joined from blobs in SQL.
    channels             text[] COLLATE "C" NOT NULL,
    versions             text[] COLLATE "C" NOT NULL,
    -- metadata for filtering (numbers exact, NULs escaped) ...
    metadata             jsonb NOT NULL,
    -- ... and metadata exactly as stored, types included (serde bytes).
    metadata_exact       bytea NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

-- One row per (thread, namespace, channel, version). A NULL value is the
-- "no value" marker of a channel that was cleared at that version.
CREATE TABLE {{schema}}.blobs (
    thread_id     text COLLATE "C" NOT NULL,
    checkpoint_ns text COLLATE "C" NOT NULL,
    channel       text COLLATE "C" NOT NULL,
    version       text COLLATE "C" NOT NULL,
    value         bytea,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- Pending writes, keyed as the contract says. idx is spec.WriteIndex:
-- negative for the special (last-write-wins) channels.
CREATE TABLE {{schema}}.writes (
    thread_id     text    COLLATE "C" NOT NULL,
    checkpoint_ns text    COLLATE "C" NOT NULL,
    checkpoint_id text    COLLATE "C" NOT NULL,
    task_id       text    COLLATE "C" NOT NULL,
    idx           integer NOT NULL,
    channel       text    COLLATE "C" NOT NULL,
    value         bytea   NOT NULL,
    task_path     text    COLLATE "C" NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
