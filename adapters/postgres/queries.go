package postgres

import (
	"strconv"
	"strings"
)

// queries holds the fixed statements of one schema, built once per saver with
// the schema name quoted as an identifier. Nothing a caller passes is ever
// spliced into SQL text: keys, IDs and filter values are all parameters.
type queries struct {
	schema      string // quoted
	checkpoints string // quoted, schema-qualified table names
	blobs       string
	writes      string
	migrations  string

	put          string
	putWrites    string
	deleteThread string
	copyThread   string
	deleteRuns   string
	pruneLatest  string
	pruneAll     string
	deltaHistory string
	pageInner    string // SELECT c.* FROM checkpoints c, before WHERE ... LIMIT
	pageHead     string // the page query up to the inner SELECT ...
	pageTail     string // ... and after it
}

func buildQueries(schema string) queries {
	q := queries{
		schema:      schema,
		checkpoints: schema + ".checkpoints",
		blobs:       schema + ".blobs",
		writes:      schema + ".writes",
		migrations:  schema + ".schema_migrations",
	}
	r := strings.NewReplacer("{c}", q.checkpoints, "{b}", q.blobs, "{w}", q.writes)

	// One statement, hence one transaction: the values and the checkpoint
	// appear together or not at all. Values are upserted in channel order
	// so that concurrent Puts lock rows in the same order.
	q.put = r.Replace(`WITH stored_blobs AS (
	INSERT INTO {b} (thread_id, checkpoint_ns, channel, version, value)
	SELECT $1, $2, nb.channel, nb.version, nb.value
	FROM unnest($9::text[], $10::text[], $11::bytea[]) WITH ORDINALITY AS nb(channel, version, value, ord)
	ORDER BY nb.ord
	ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET value = excluded.value
)
INSERT INTO {c} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, channels, versions, metadata, metadata_exact)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $12)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
	parent_checkpoint_id = excluded.parent_checkpoint_id,
	checkpoint = excluded.checkpoint,
	channels = excluded.channels,
	versions = excluded.versions,
	metadata = excluded.metadata,
	metadata_exact = excluded.metadata_exact`)

	// Regular writes (idx >= 0) are first-wins: the conflict update is
	// filtered out. Special writes (idx < 0) are last-wins.
	q.putWrites = r.Replace(`INSERT INTO {w} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, value)
SELECT $1, $2, $3, $4, $5, nw.idx, nw.channel, nw.value
FROM unnest($6::integer[], $7::text[], $8::bytea[]) WITH ORDINALITY AS nw(idx, channel, value, ord)
ORDER BY nw.ord
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
	channel = excluded.channel,
	value = excluded.value,
	task_path = excluded.task_path
WHERE excluded.idx < 0`)

	q.deleteThread = r.Replace(`WITH dw AS (DELETE FROM {w} WHERE thread_id = $1),
db AS (DELETE FROM {b} WHERE thread_id = $1)
DELETE FROM {c} WHERE thread_id = $1`)

	q.copyThread = r.Replace(`WITH cb AS (
	INSERT INTO {b} (thread_id, checkpoint_ns, channel, version, value)
	SELECT $2, checkpoint_ns, channel, version, value FROM {b} WHERE thread_id = $1
	ORDER BY checkpoint_ns, channel, version
	ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET value = excluded.value
), cw AS (
	INSERT INTO {w} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, value)
	SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, value FROM {w} WHERE thread_id = $1
	ORDER BY checkpoint_ns, checkpoint_id, task_id, idx
	ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
		channel = excluded.channel, value = excluded.value, task_path = excluded.task_path
)
INSERT INTO {c} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, channels, versions, metadata, metadata_exact)
SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, channels, versions, metadata, metadata_exact
FROM {c} WHERE thread_id = $1
ORDER BY checkpoint_ns, checkpoint_id
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
	parent_checkpoint_id = excluded.parent_checkpoint_id,
	checkpoint = excluded.checkpoint,
	channels = excluded.channels,
	versions = excluded.versions,
	metadata = excluded.metadata,
	metadata_exact = excluded.metadata_exact`)

	// DeleteForRuns and Prune(KeepLatest) keep what delta channels need:
	// see delta_sql.go.
	d := buildDeltaQueries(q)
	q.deleteRuns, q.pruneLatest, q.deltaHistory = d.deleteRuns, d.pruneLatest, d.history

	q.pruneAll = r.Replace(`WITH dw AS (DELETE FROM {w} WHERE thread_id = ANY($1::text[])),
db AS (DELETE FROM {b} WHERE thread_id = ANY($1::text[]))
DELETE FROM {c} WHERE thread_id = ANY($1::text[])`)

	// A page is two nested SELECTs. The inner one reads the checkpoints in
	// list order, which the primary key (or the global-order index)
	// yields without sorting, applies the metadata filter and stops at the
	// page size. The outer one brings each checkpoint's values and pending
	// writes along, by two lateral subqueries over the primary keys of
	// blobs and writes, for the page's rows only: a page is one round
	// trip, with no query per checkpoint. The LIMIT 1 keeps each blob
	// lookup a parameterised primary-key probe (as a plain join, a planner
	// without statistics scanned every blob of the thread instead).
	//
	// Nothing is sorted on the server: the inner SELECT's order survives
	// the lateral joins, and the writes come in primary-key order, but as
	// SQL promises neither, the client puts rows and writes in order
	// (sortPage, decodeTuple). An outer ORDER BY and three ordered
	// array_aggs were four sorts per page: 30 % of a List(10)'s time on
	// the server (docs/benchmarks.md).
	q.pageInner = r.Replace(`SELECT c.* FROM {c} c`)
	pageOuter := r.Replace(`SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
	c.checkpoint, c.metadata_exact, bv.channels, bv.vals, pw.task_ids, pw.idxs, pw.channels, pw.vals
FROM ({page}) c
LEFT JOIN LATERAL (
	SELECT array_agg(cv.channel) AS channels, array_agg(v.value) AS vals
	FROM unnest(c.channels, c.versions) AS cv(channel, version)
	CROSS JOIN LATERAL (
		SELECT b.value FROM {b} b
		WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
			AND b.channel = cv.channel AND b.version = cv.version AND b.value IS NOT NULL
		LIMIT 1
	) v
) bv ON true
LEFT JOIN LATERAL (
	SELECT array_agg(w.task_id) AS task_ids, array_agg(w.idx) AS idxs,
		array_agg(w.channel) AS channels, array_agg(w.value) AS vals
	FROM {w} w
	WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
) pw ON true`)
	// Split rather than formatted: the quoted schema name may hold any
	// character, '%' included.
	q.pageHead, q.pageTail, _ = strings.Cut(pageOuter, "{page}")
	return q
}

// sqlBuilder accumulates the conditions of a page query and their
// parameters: where for the ordered scan, filter for the metadata filter.
type sqlBuilder struct {
	where  []string
	filter []string
	args   []any
}

// arg adds a parameter and returns its placeholder.
func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func (b *sqlBuilder) cond(c string) { b.where = append(b.where, c) }

func whereSQL(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(conds, "\n\tAND ")
}
