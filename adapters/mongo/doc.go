// Package mongo is checkpointkit's MongoDB checkpoint saver.
package mongo
