package spec

import _ "embed"

//go:embed SPEC.md
var specMarkdown string

// SpecMarkdown returns the text of SPEC.md, the numbered rules of the
// contract. The conformance suite parses it to check that every rule ID is
// cited by a spec and that every cited ID exists.
func SpecMarkdown() string { return specMarkdown }
