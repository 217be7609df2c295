package dialect

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// mysqlDescriptor answers every question idsql asks of MySQL and MariaDB.
var mysqlDescriptor = descriptor{
	spec: spec{
		name:    "mysql",
		title:   "MySQL",
		aliases: []string{"mariadb"},
		keyBack: LastInsertID,
		quote:   '`',
		// MariaDB reports the implicit DEFAULT NULL of a nullable column
		// as the text NULL (a string default is quoted there, 'x');
		// MySQL reports SQL NULL. Neither is a value for a key.
		columns: `SELECT column_name,
	(column_default IS NOT NULL AND NOT (column_default = 'NULL' AND is_nullable = 'YES'))
		OR extra LIKE '%auto_increment%' OR extra LIKE '%GENERATED%',
	column_type
FROM information_schema.columns
WHERE table_schema = coalesce(?, database()) AND table_name = ?
ORDER BY ordinal_position`,
		keyBits: namedInts(map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}),
		widen:   "ALTER TABLE %s MODIFY %s BIGINT NOT NULL, keeping the column's other attributes (AUTO_INCREMENT, ...)",
		// MariaDB's UUID type (10.7 and later) takes the text form; a
		// BINARY(16) holds the bytes in RFC 9562 order.
		uuidTypes: map[string]UUIDStorage{"uuid": UUIDText, "binary(16)": UUIDBytes},
		uuidFix:   "make it UUID (MariaDB 10.7 and later) or BINARY(16)",
		// InnoDB's per-commit flush is a global setting that no session
		// can raise: LazyCommits reads it.
		lazyCheck: true,
		// Replicas and Galera are not read: see RELIABILITY.md.
		standbys: nil,
		// UTC_TIMESTAMP and NOW are the time the statement began, stale
		// after a lock wait; SYSDATE reads the clock at evaluation but in
		// the session's time zone, which may observe daylight saving time.
		// Adding the time elapsed since the statement began (SYSDATE - NOW,
		// both in the session's zone) to UTC_TIMESTAMP gives UTC read at
		// evaluation. On a server started with --sysdate-is-now it is the
		// statement's start.
		clock: "(UTC_TIMESTAMP(6) + INTERVAL TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6)) MICROSECOND)",
		unique: func(err error) bool {
			switch mysqlNumber(err) {
			case 1062, 1586, 1022, 1169: // ER_DUP_ENTRY, ER_DUP_ENTRY_WITH_KEY_NAME, ER_DUP_KEY, ER_DUP_UNIQUE
				return true
			}
			return false
		},
		serialization: func(err error) bool {
			// ER_LOCK_DEADLOCK (SQLSTATE 40001), and MariaDB's ER_CHECKREAD
			// under innodb_snapshot_isolation; both roll the transaction back.
			n := mysqlNumber(err)
			return n == 1213 || n == 1020
		},
		lost: func(err error) bool {
			switch mysqlNumber(err) {
			case 1053, 1927, 2006, 2013, 4031: // server shutdown, connection killed, gone away, lost, idle timeout
				return true
			}
			return mysqlInvalidConn(err) || transportLost(err)
		},
		columnArgs: func(d Dialect, schema, table string) ([]any, error) {
			var db any
			if schema != "" {
				db = schema
			}
			return []any{db, table}, nil
		},
		undefinedTable:  func(err error) bool { return mysqlNumber(err) == 1146 },
		undefinedColumn: func(err error) bool { return mysqlNumber(err) == 1054 },
		duplicateColumn: func(err error) bool { return mysqlNumber(err) == 1060 },
		// utf8mb4_bin: names compare byte for byte, as on PostgreSQL.
		shapeSchema: []string{`
CREATE TABLE IF NOT EXISTS idsql_shapes (
	namespace  VARCHAR(191) NOT NULL,
	table_name VARCHAR(191) NOT NULL,
	shape      VARCHAR(64)  NOT NULL,
	recorded   VARCHAR(40)  NOT NULL,
	PRIMARY KEY (namespace, table_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`},
		ignoreVerb:      "INSERT IGNORE INTO",
		ignoreTail:      "",
		rangePartitions: false,
		maxIdent:        64,
		// No session can make a commit durable: lazyCheck reads the server's
		// settings instead.
		durable:     "",
		durableExpr: "",
		// The namespace lock is a row lock (registry.namespaceLock).
		xactLock:        "",
		updateReturning: false,
		onConflict:      false,
	},
	syntax: Syntax{
		Bind:                 Question,
		FoldUnquoted:         false,
		BacktickQuotes:       true,
		BracketQuotes:        false,
		DoubleQuotedStrings:  true,
		BackslashEscapes:     true,
		RefuseBackslash:      false,
		EscapeStrings:        false,
		DollarQuotes:         false,
		DigitWords:           true,
		RefuseNUL:            true,
		RefuseNamedParams:    false,
		RefuseNumberedParams: false,
		HashComments:         HashComment,
		DashComments:         DashSpaced,
		BlockComments:        BlockExecutable,
		Replace:              true,
		InsertModifiers:      true,
		InsertOr:             false,
		MySQLInsert:          true,
		TypeCasts:            false,
		SpliceQuote:          '`',
		AlwaysQuote:          true,
	},
	facts: facts{
		driverName: "mysql",
		sqlxName:   "mysql",
		dsn: func(dsn string) bool {
			if hasPrefixFold(dsn, "mysql://", "mariadb://", "tcp(", "unix(") {
				return true
			}
			// go-sql-driver's user:pass@tcp(host:port)/db form.
			for _, p := range []string{"@tcp(", "@tcp6(", "@unix("} {
				if strings.Contains(dsn, p) {
					return true
				}
			}
			return false
		},
		sequenceless: func(version string) string {
			if strings.Contains(strings.ToLower(version), "mariadb") {
				return ""
			}
			return "MySQL " + version
		},
		driverDSN: mysqlURLDSN,
		multiWriter: func(ctx context.Context, q RowQueryer) (string, error) {
			var on string
			if err := q.QueryRowContext(ctx, "SELECT @@GLOBAL.wsrep_on").Scan(&on); err != nil {
				if strings.Contains(err.Error(), "Unknown system variable") {
					return "", nil // MySQL has no wsrep_on: not a Galera node
				}
				return "", fmt.Errorf("read wsrep_on: %w", err)
			}
			if on == "1" || strings.EqualFold(on, "ON") {
				return "a Galera cluster (wsrep_on = ON)", nil
			}
			return "", nil
		},
		// A causality check of the statement only (a table-less SELECT
		// takes part: wsrep_causal_reads counts it).
		catchUp: "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT 1",
		// go-sql-driver prepares on the connection it executes on.
		splitStatement: nil,
		splitHint:      "",
		grants: []string{
			"GRANT SELECT, INSERT, UPDATE ON idsql_workers TO %s",
			"GRANT SELECT, INSERT, UPDATE ON idsql_worker_locks TO %s",
			"GRANT SELECT, UPDATE ON idsql_alloc TO %s",
			"GRANT SELECT, INSERT ON idsql_alloc_log TO %s",
			"GRANT SELECT ON idsql_shapes TO %s",
			// The segment store allocates through its procedure.
			"GRANT EXECUTE ON PROCEDURE idsql_allocate_v1 TO %s",
		},
		// Error 1142 (1370 for a routine): SELECT command denied to user ... for table ...
		denied: func(msg string) bool { return strings.Contains(msg, "command denied to user") },
		connectHint: func(msg string) string {
			// go-sql-driver's words for a server without TLS.
			if strings.Contains(msg, "TLS requested but server does not support TLS") {
				return "the server offers no TLS and the DSN's tls= asks for it: turn TLS on in the server, or drop tls= from the DSN on a network you trust"
			}
			return ""
		},
		segmentStoreApart: false,
		pgWire:            false,
	},
	statements: statementSpec{
		foldColumns:     true,
		sessionMode:     true,
		autoIncrementID: true,
		countsUpdates:   true,
	},
	registry: registrySpec{
		// Every statement is idempotent and atomic on its own (no separate
		// CREATE INDEX, which MySQL cannot make conditional), so several
		// processes may migrate at once. Text compares byte for byte
		// (utf8mb4_bin), as on PostgreSQL. idsql_worker_locks holds one row
		// per namespace, whose row lock serializes claims (NamespaceLock).
		// Heartbeats change no indexed column and a release only
		// idsql_workers_live's, so both lock little beyond the lease's own
		// row. VARCHAR(191) indexes in full with utf8mb4 on every row format.
		schema: []string{`
CREATE TABLE IF NOT EXISTS idsql_workers (
	lease_id       BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	namespace      VARCHAR(191) NOT NULL,
	worker_id      BIGINT       NOT NULL,
	table_name     VARCHAR(191) NOT NULL,
	instance       VARCHAR(191) NOT NULL,
	host           VARCHAR(255) NOT NULL DEFAULT '',
	port           INT          NOT NULL DEFAULT 0,
	pid            INT          NOT NULL DEFAULT 0,
	holder_kind    VARCHAR(64)  NOT NULL,
	started        DATETIME(6)  NOT NULL,
	ids_after      DATETIME(6)  NOT NULL,
	last_heartbeat DATETIME(6)  NOT NULL,
	last_timestamp DATETIME(6)  NULL,
	released       DATETIME(6)  NULL,
	expires        DATETIME(6)  NULL,
	KEY idsql_workers_worker (namespace, worker_id, ids_after),
	KEY idsql_workers_live (namespace, released, worker_id),
	KEY idsql_workers_instance (namespace, instance, table_name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`, `
CREATE TABLE IF NOT EXISTS idsql_worker_locks (
	namespace VARCHAR(191) NOT NULL PRIMARY KEY,
	claims    BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
			// The lock row of a table made before claims existed gets it
			// (MySQL 8 has no ADD COLUMN IF NOT EXISTS: a duplicate column
			// is taken as done, DuplicateColumn).
			`ALTER TABLE idsql_worker_locks ADD COLUMN claims BIGINT NOT NULL DEFAULT 0`,
		},
		timeType:    "DATETIME(6)",
		zoneless:    true,
		plusMicros:  "(%s + INTERVAL %s MICROSECOND)",
		microsUntil: "TIMESTAMPDIFF(MICROSECOND, %s, %s)",
		// READ COMMITTED: every statement reads what was committed before
		// it, as on PostgreSQL, and InnoDB locks no gaps when it searches.
		// An aggregate SELECT reads the latest rows only FOR UPDATE (a
		// current read), whatever the isolation.
		readCommitted: true,
		lockingRead:   " FOR UPDATE",
		maxName:       191,
		// Unless the DSN sets clientFoundRows.
		changedRows: true,
		// MariaDB (10.3 and later) ends a session whose transaction idles
		// for idle_transaction_timeout seconds; MySQL has no such limit.
		sessionIdle: func(version string) (string, string) {
			if !strings.Contains(strings.ToLower(version), "mariadb") {
				return "", ""
			}
			return "SET SESSION idle_transaction_timeout = ?", "SET SESSION idle_transaction_timeout = DEFAULT"
		},
		// The upsert makes the namespace's row when it is the first claim
		// and locks it either way. On a Galera cluster the lock is the
		// node's own, and certification lets some concurrent changes of
		// the row on two nodes both commit (a lost update), so claims there
		// go through one writer node (OneWriter, registry.ErrMultiWriter).
		namespaceLock: "INSERT INTO idsql_worker_locks (namespace) VALUES (%s) ON DUPLICATE KEY UPDATE claims = claims + 1",
		// DDL commits on its own.
		ddlInTx: false,
		// sessionIdle ends an idle transaction's session instead.
		idleTimeout: "",
	},
	// MariaDB's; MySQL 8 has no sequences (see facts.sequenceless).
	defaults: &mariaDefaults,
	drivers:  []driverType{{mysqlPkg, "MySQLDriver"}},
}

// mysqlURLDSN turns a mysql:// or mariadb:// URL into go-sql-driver's DSN
// (user:pass@tcp(host:port)/db?params); any other DSN is returned as it
// is.
func mysqlURLDSN(dsn string) (string, error) {
	if !hasPrefixFold(dsn, "mysql://", "mariadb://") {
		return dsn, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("mysql DSN: %w", err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("mysql DSN %s: no host", u.Redacted())
	}
	var b strings.Builder
	if u.User != nil {
		b.WriteString(u.User.Username())
		if p, ok := u.User.Password(); ok {
			b.WriteString(":" + p)
		}
		b.WriteString("@")
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "3306")
	}
	b.WriteString("tcp(" + host + ")/" + strings.TrimPrefix(u.Path, "/"))
	if u.RawQuery != "" {
		b.WriteString("?" + u.RawQuery)
	}
	return b.String(), nil
}
