// Package mongo runs the conformance suite over the saver bridge against
// cmd/checkpointkit-saver serving the MongoDB adapter (a new database per saver).
package mongo
