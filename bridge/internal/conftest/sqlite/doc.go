// Package sqlite runs the conformance suite over the saver bridge against
// cmd/checkpointkit-saver serving the SQLite adapter (a new database file per saver).
package sqlite
