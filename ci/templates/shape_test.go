package templates

import (
	"context"
	"database/sql"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/spec"
)

// shaped is the method set the template's header describes and every
// checkpointkit adapter's Saver has.
type shaped interface {
	spec.Saver
	io.Closer
	Setup(ctx context.Context) error
}

// The shape the template recommends, checked by the compiler against the
// kit's own adapters, so that the advice stays true.
var (
	_ shaped = (*memory.Saver)(nil)
	_ shaped = (*sqlite.Saver)(nil)
	_ shaped = (*postgres.Saver)(nil)
	_ shaped = (*mongo.Saver)(nil)

	_ func(...memory.Option) *memory.Saver                                              = memory.New
	_ func(context.Context, string, ...sqlite.Option) (*sqlite.Saver, error)            = sqlite.Open
	_ func(context.Context, *sql.DB, ...sqlite.Option) (*sqlite.Saver, error)           = sqlite.New
	_ func(context.Context, string, ...postgres.Option) (*postgres.Saver, error)        = postgres.Open
	_ func(context.Context, *pgxpool.Pool, ...postgres.Option) (*postgres.Saver, error) = postgres.New
	_ func(context.Context, string, ...mongo.Option) (*mongo.Saver, error)              = mongo.Open
	_ func(context.Context, *mongodrv.Client, ...mongo.Option) (*mongo.Saver, error)    = mongo.New

	_ func(spec.Serde) memory.Option   = memory.WithSerde
	_ func(spec.Serde) sqlite.Option   = sqlite.WithSerde
	_ func(spec.Serde) postgres.Option = postgres.WithSerde
	_ func(spec.Serde) mongo.Option    = mongo.WithSerde
	_ func(int) sqlite.Option          = sqlite.WithListPageSize
	_ func(int) postgres.Option        = postgres.WithListPageSize
	_ func(int) mongo.Option           = mongo.WithListPageSize
)

// TestAdaptersShareOneOptionShape checks what the compiler cannot name:
// every adapter's Option is func(*options) over an unexported struct.
func TestAdaptersShareOneOptionShape(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[memory.Option](), reflect.TypeFor[sqlite.Option](),
		reflect.TypeFor[postgres.Option](), reflect.TypeFor[mongo.Option](),
	} {
		if typ.Kind() != reflect.Func || typ.NumIn() != 1 || typ.NumOut() != 0 ||
			typ.In(0).Kind() != reflect.Pointer || typ.In(0).Elem().Name() != "options" ||
			typ.In(0).Elem().Kind() != reflect.Struct {
			t.Errorf("%s.Option is %s, want func(*options)", typ.PkgPath(), typ)
		}
	}
}

// TestTemplateUsesTheAdapterShape checks that the template opens its saver
// as the shape says: Open with the harness's context first, no separate
// Setup call (Open returns a ready saver), and Close without arguments.
func TestTemplateUsesTheAdapterShape(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "conformance_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]*ast.CallExpr{}
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
				calls[sel.Sel.Name] = c
			}
		}
		return true
	})
	if open := calls["Open"]; open == nil || len(open.Args) < 2 {
		t.Error("the template must call Open(ctx, target, ...)")
	} else if id, ok := open.Args[0].(*ast.Ident); !ok || id.Name != "ctx" {
		t.Errorf("%s: Open's first argument must be the harness's ctx", fset.Position(open.Pos()))
	}
	if c := calls["Close"]; c == nil || len(c.Args) != 0 {
		t.Error("the template must release its saver with Close()")
	}
	if c := calls["Setup"]; c != nil {
		t.Errorf("%s: Open returns a ready saver; the template must not need Setup", fset.Position(c.Pos()))
	}
}
