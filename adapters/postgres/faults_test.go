package postgres

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// restartEnv names a shell command that restarts the PostgreSQL server
// of CHECKPOINTKIT_POSTGRES_DSN and returns once it accepts connections.
// When set, the faults group restarts the server for real in the middle of
// a run; it disturbs every other client of that server, so set it only for
// a server of your own. Without it that spec reports "not supported" and
// only the suite's proxy restarts the connection path.
const restartEnv = "CHECKPOINTKIT_POSTGRES_RESTART"

// faultHarness routes savers over dsn through the suite's fault proxy:
// each saver gets a pool of its own, dialling the proxy instead of dsn's
// host, and an empty schema of its own, dropped through the shared direct
// pool afterwards. restart is a shell command for FaultHarness.Restart, or
// "". bouncer says dsn names a transaction-mode pooler.
func faultHarness(t *testing.T, dsn, restart string, bouncer bool) *conformance.FaultHarness {
	t.Helper()
	base, err := poolConfig(dsn, bouncer)
	if err != nil {
		t.Fatalf("parse %q: %v", dsn, err)
	}
	addr := net.JoinHostPort(base.ConnConfig.Host, strconv.Itoa(int(base.ConnConfig.Port)))
	direct := testPool(t)
	fh := &conformance.FaultHarness{
		Addr: addr,
		New: func(ctx context.Context, via string) (spec.Saver, func(), error) {
			host, port, err := net.SplitHostPort(via)
			if err != nil {
				return nil, nil, err
			}
			p, err := strconv.Atoi(port)
			if err != nil {
				return nil, nil, err
			}
			cfg := base.Copy()
			cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks = host, uint16(p), nil
			if tls := cfg.ConnConfig.TLSConfig; tls != nil && tls.ServerName == "" {
				tls.ServerName = base.ConnConfig.Host
			}
			cfg.MaxConns = 4
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				return nil, nil, err
			}
			schema := uniqueSchema("fault")
			s, err := New(ctx, pool, WithSchema(schema))
			if err != nil {
				pool.Close()
				return nil, nil, err
			}
			return s, func() {
				pool.Close()
				_ = unsetSaver(t, direct, WithSchema(schema)).DropSchema(context.Background())
			}, nil
		},
	}
	if restart != "" {
		fh.Restart = func(ctx context.Context) error {
			cmd := exec.CommandContext(ctx, "sh", "-c", restart)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			return cmd.Run()
		}
	}
	return fh
}

// throughPgBouncer reports whether TestConformance runs through the
// pooler of CHECKPOINTKIT_PGBOUNCER_DSN (the matrix's pgbouncer column
// sets CHECKPOINTKIT_PG_VIA=pgbouncer).
func throughPgBouncer() bool { return os.Getenv("CHECKPOINTKIT_PG_VIA") == "pgbouncer" }

// pgbouncerDSN returns the pooler's DSN, failing the test when it is
// missing.
func pgbouncerDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(pgbouncerEnv)
	if dsn == "" {
		t.Fatal("CHECKPOINTKIT_PG_VIA=pgbouncer needs " + pgbouncerEnv)
	}
	return dsn
}

// poolConfig parses dsn and configures it with ConfigurePool; for a
// transaction-mode pooler (bouncer), statements run in pgx's exec mode, so
// that no prepared statement outlives its statement.
func poolConfig(dsn string, bouncer bool) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	ConfigurePool(cfg)
	if bouncer {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	return cfg, nil
}
