// Package templates holds copy-paste templates for the authors of
// third-party checkpointkit adapters: conformance_test.go (excluded from
// this module's build by a go:build ignore line) and the GitHub workflow
// conformance.yml. The package's test checks that the template still
// matches the conformance API; ci/test runs actionlint on the workflow.
package templates
