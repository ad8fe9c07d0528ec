// Package templates holds copy-paste templates for the authors of
// third-party checkpointkit adapters: conformance_test.go (excluded from
// this module's build by a go:build ignore line) and the GitHub workflow
// conformance.yml. The template describes the shape of checkpointkit's own
// adapters (Open and New returning a ready saver, Setup, Close, Option)
// and is written for an adapter with that shape. The package's tests check
// that the template still matches the conformance API, that it uses that
// shape, and that the kit's four adapters have it; ci/test runs actionlint
// on the workflow.
package templates
