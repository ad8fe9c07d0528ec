package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// restartEnv names a shell command that restarts the PostgreSQL server
// of the faults group (faultsDSNEnv, else CHECKPOINTKIT_POSTGRES_DSN) and
// returns once it accepts connections. When set, the faults group restarts
// the server for real in the middle of a run; it disturbs every other
// client of that server, so set it only for a server of your own (ci/
// scripts start a second cluster for it). Without it that spec reports
// "not supported" and only the suite's proxy restarts the connection path.
const restartEnv = "CHECKPOINTKIT_POSTGRES_RESTART"

// faultsDSNEnv names the database the faults group of the direct
// harness uses instead of CHECKPOINTKIT_POSTGRES_DSN: a server of its own,
// which restartEnv restarts.
const faultsDSNEnv = "CHECKPOINTKIT_POSTGRES_FAULTS_DSN"

// faultsDSN returns the database of the faults group.
func faultsDSN(t *testing.T) string {
	if dsn := os.Getenv(faultsDSNEnv); dsn != "" {
		return dsn
	}
	return testDSN(t)
}

// faultHarness routes savers over dsn through the suite's fault proxy:
// each saver gets a pool of its own, dialling the proxy instead of dsn's
// host, and an empty schema of its own, dropped afterwards. restart is a shell command for FaultHarness.Restart, or
// "". bouncer says dsn names a transaction-mode pooler.
func faultHarness(t *testing.T, dsn, restart string, bouncer bool) *conformance.FaultHarness {
	t.Helper()
	base, err := poolConfig(dsn, bouncer)
	if err != nil {
		t.Fatalf("parse %q: %v", dsn, err)
	}
	addr := net.JoinHostPort(base.ConnConfig.Host, strconv.Itoa(int(base.ConnConfig.Port)))
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
			return broken(s), func() {
				// Through the proxy, which the specs leave up; a spec
				// that failed with it down leaves the schema behind.
				dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = s.DropSchema(dctx)
				pool.Close()
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

// brokenEnv makes the savers of the faults group deliberately broken, for
// TestFaultSpecsCatchBrokenSavers: "torn" writes a checkpoint in two
// statements without a transaction, "raw-errors" hides spec.ErrUnavailable.
const brokenEnv = "CHECKPOINTKIT_PG_BROKEN"

// tornSaver stores a checkpoint without its values, then again with them:
// two statements, no transaction, so a cut between them leaves a
// checkpoint whose values are missing (FAULT-1).
type tornSaver struct{ *Saver }

func (s tornSaver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	if _, err := s.Saver.Put(ctx, cfg, cp, md, spec.Versions{}); err != nil {
		return spec.Config{}, err
	}
	return s.Saver.Put(ctx, cfg, cp, md, nv)
}

// rawErrSaver returns the text of its errors only, as a saver that passes
// the driver's errors on unclassified would: no spec.ErrUnavailable
// (FAULT-2).
type rawErrSaver struct{ *Saver }

func (s rawErrSaver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	out, err := s.Saver.Put(ctx, cfg, cp, md, nv)
	if err != nil {
		return out, errors.New(err.Error())
	}
	return out, nil
}

// broken wraps s as brokenEnv asks.
func broken(s *Saver) spec.Saver {
	switch os.Getenv(brokenEnv) {
	case "torn":
		return tornSaver{s}
	case "raw-errors":
		return rawErrSaver{s}
	}
	return s
}

// TestFaultSpecsCatchBrokenSavers proves the faults group: it runs the
// Put sweep of the suite, in a child process, against a saver that writes
// a checkpoint in two statements without a transaction and against one
// that hides spec.ErrUnavailable, and requires the first to fail FAULT-1
// and the second FAULT-2. The kill matrix's mutants wrap the memory saver,
// which has no network, so this is where the FAULT rules are shown to
// catch what they are about.
func TestFaultSpecsCatchBrokenSavers(t *testing.T) {
	testDSN(t)
	for _, tc := range []struct{ mode, rule string }{{"torn", "[FAULT-1]"}, {"raw-errors", "[FAULT-2]"}} {
		t.Run(tc.mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.json")
			cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-test.count=1",
				"-ginkgo.label-filter=faults", "-ginkgo.focus=across Put ")
			cmd.Env = append(os.Environ(), brokenEnv+"="+tc.mode, "CHECKPOINTKIT_REPORT_JSON="+out, "CHECKPOINTKIT_PG_VIA=")
			var log strings.Builder
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Run(); err == nil {
				t.Fatalf("the faults group passed a %s saver:\n%s", tc.mode, log.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("no report: %v\n%s", err, log.String())
			}
			var rep report.Report
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			caught := false
			for _, h := range rep.Harnesses {
				for _, sp := range h.Specs {
					if sp.Status == report.StatusFailed && strings.HasPrefix(sp.Message, tc.rule) {
						caught = true
						t.Logf("caught: %s", firstLine(sp.Message))
					}
				}
			}
			if !caught {
				t.Fatalf("no spec failed with %s on a %s saver:\n%s", tc.rule, tc.mode, log.String())
			}
		})
	}
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
