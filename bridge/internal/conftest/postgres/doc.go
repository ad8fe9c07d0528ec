// Package postgres runs the conformance suite over the saver bridge against
// cmd/checkpointkit-saver serving the PostgreSQL adapter (a new schema per saver).
package postgres
