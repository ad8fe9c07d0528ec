// Package memory runs the conformance suite over the saver bridge against
// cmd/checkpointkit-saver serving the in-memory adapter.
package memory
