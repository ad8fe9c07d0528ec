package templates

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The calls the template makes, checked by the compiler.
var (
	_ func(*testing.T, conformance.Harness) = conformance.Run
	_                                       = conformance.Harness{
		Name: "redis",
		New:  func(ctx context.Context) (spec.Saver, func(), error) { return nil, nil, nil },
		Skip: map[string]string{},
	}
)

// TestTemplateUsesTheConformanceAPI parses conformance_test.go (which this
// module does not build) and checks that every conformance identifier and
// Harness field it uses exists, so the template cannot silently rot.
func TestTemplateUsesTheConformanceAPI(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "conformance_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	known := []string{"Run", "Harness"}
	fields := map[string]bool{}
	for i := range reflect.TypeFor[conformance.Harness]().NumField() {
		fields[reflect.TypeFor[conformance.Harness]().Field(i).Name] = true
	}
	var usedRun, usedHarness bool
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == "conformance" {
				if !slices.Contains(known, n.Sel.Name) {
					t.Errorf("%s: conformance.%s is not checked by this test; add it to the compiled uses above", fset.Position(n.Pos()), n.Sel.Name)
				}
				usedRun = usedRun || n.Sel.Name == "Run"
			}
		case *ast.CompositeLit:
			sel, ok := n.Type.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Harness" {
				return true
			}
			usedHarness = true
			for _, e := range n.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && !fields[k.Name] {
					t.Errorf("%s: conformance.Harness has no field %s", fset.Position(kv.Pos()), k.Name)
				}
			}
		}
		return true
	})
	if !usedRun || !usedHarness {
		t.Errorf("the template must call conformance.Run with a conformance.Harness (Run %v, Harness %v)", usedRun, usedHarness)
	}
	if len(f.Comments) == 0 || f.Comments[0].List[0].Text != "//go:build ignore" {
		t.Error("the template must start with //go:build ignore, so that this module does not build it")
	}
}
