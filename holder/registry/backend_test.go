package registry_test

import (
	"database/sql"
	"testing"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// backend is a database the registry runs on, for tests.
type backend struct {
	name string
	open func(t *testing.T) *sql.DB
	// settings are added to every registry's: the MySQL test server flushes
	// commits lazily (innodb_flush_log_at_trx_commit = 2).
	settings func(registry.Settings) registry.Settings
}

var (
	postgreSQL = backend{
		name: "PostgreSQL",
		open: func(t *testing.T) *sql.DB {
			db, _ := pgtest.Open(t)
			return db
		},
		settings: func(s registry.Settings) registry.Settings { return s },
	}
	mySQL = backend{
		name: "MySQL",
		open: func(t *testing.T) *sql.DB {
			db, _ := mysqltest.Open(t)
			return db
		},
		settings: func(s registry.Settings) registry.Settings {
			s.AcceptLazyCommits = true
			return s
		},
	}
)

// cases run on every backend, as subtests of TestPostgreSQL and TestMySQL
// (go test -run MySQL selects the MySQL ones).
var cases = []struct {
	name string
	run  func(t *testing.T, b backend)
}{
	{"FindAcrossRecycling", testFindAcrossRecycling},
	{"RecordedClockBehind", testRecordedClockBehind},
	{"HeartbeatRaisesHorizon", testHeartbeatRaisesHorizon},
	{"HeartbeatSeesRowEnded", testHeartbeatSeesRowEnded},
	{"FirstHeartbeatAfterSlowClaim", testFirstHeartbeatAfterSlowClaim},
	{"SlowHeartbeatWarns", testSlowHeartbeatWarns},
	{"RecordedFailureGivesHorizonBack", testRecordedFailureGivesHorizonBack},
	{"MigrateConcurrently", testMigrateConcurrently},
	{"DialectFromDriver", testDialectFromDriver},
}

func TestPostgreSQL(t *testing.T) { runCases(t, postgreSQL) }

func TestMySQL(t *testing.T) { runCases(t, mySQL) }

func runCases(t *testing.T, b backend) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, b)
		})
	}
}
