package dialect

import "strings"

// postgresDescriptor answers every question idsql asks of PostgreSQL.
var postgresDescriptor = descriptor{
	spec: spec{
		name:    "postgres",
		title:   "PostgreSQL",
		aliases: []string{"postgresql", "pgx"},
		keyBack: Returning,
		quote:   '"',
		// to_regclass resolves the name as the statement would (search
		// path); the argument is a quoted, possibly qualified, name.
		columns: `SELECT a.attname, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '', format_type(a.atttypid, a.atttypmod)
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`,
		keyBits: namedInts(map[string]int{"smallint": 16, "integer": 32, "bigint": 64}),
		widen:   "ALTER TABLE %s ALTER COLUMN %s TYPE bigint",
		// lib/pq and pgx both send a UUID parameter as text.
		uuidTypes: map[string]UUIDStorage{"uuid": UUIDText},
		uuidFix:   "make it uuid",
		// synchronous_commit = off (server, role or session) would
		// acknowledge a commit before its WAL is written.
		durable:         "SET LOCAL synchronous_commit = on",
		durableExpr:     "set_config('synchronous_commit', 'on', true)",
		xactLock:        "SELECT pg_advisory_xact_lock(%s)",
		clock:           "clock_timestamp()",
		updateReturning: true,
		onConflict:      true,
		unique:          func(err error) bool { return sqlState(err) == "23505" },
		serialization: func(err error) bool {
			s := sqlState(err)
			return s == "40001" || s == "40P01"
		},
		lost: func(err error) bool {
			s := sqlState(err)
			return strings.HasPrefix(s, "08") || s == "57P01" || s == "57P02" || s == "57P03" || transportLost(err)
		},
		columnArgs: func(d Dialect, schema, table string) ([]any, error) {
			name := d.Quote(table)
			if schema != "" {
				name = d.Quote(schema) + "." + name
			}
			return []any{name}, nil
		},
		undefinedTable:  func(err error) bool { return sqlState(err) == "42P01" },
		undefinedColumn: func(err error) bool { return sqlState(err) == "42703" },
		duplicateColumn: func(err error) bool { return sqlState(err) == "42701" },
		shapeSchema:     textShapeSchema,
		ignoreVerb:      "INSERT INTO",
		ignoreTail:      " ON CONFLICT (%s) DO NOTHING",
		rangePartitions: true,
		maxIdent:        pgMaxIdent,
		// The server's settings cannot lower durable's commit, but an
		// asynchronous standby can miss it.
		lazyCheck: false,
		standbys:  pgUnsafeStandbys,
	},
	syntax: Syntax{
		Bind:                 Dollar,
		FoldUnquoted:         true,
		BacktickQuotes:       false,
		BracketQuotes:        false,
		DoubleQuotedStrings:  false,
		BackslashEscapes:     false,
		RefuseBackslash:      false,
		EscapeStrings:        true,
		DollarQuotes:         true,
		DigitWords:           false,
		RefuseNUL:            false,
		RefuseNamedParams:    false,
		RefuseNumberedParams: false,
		HashComments:         HashOperator,
		DashComments:         DashAlways,
		BlockComments:        BlockNested,
		Replace:              false,
		InsertModifiers:      false,
		InsertOr:             false,
		MySQLInsert:          false,
		TypeCasts:            true,
		SpliceQuote:          '"',
		AlwaysQuote:          false,
	},
	facts: facts{
		driverName:        "postgres",
		sqlxName:          "postgres",
		dsn:               func(dsn string) bool { return hasPrefixFold(dsn, "postgres://", "postgresql://") },
		pgWire:            true,
		segmentStoreApart: false,
		// Every PostgreSQL has sequences.
		sequenceless: nil,
		driverDSN:    nil,
		// A PostgreSQL cluster takes writes on its primary only.
		multiWriter: nil,
		catchUp:     "",
		// lib/pq prepares an unnamed statement and binds it in a second
		// round trip, and pgx by default prepares named statements once per
		// connection: behind a pooler in transaction mode the second part
		// reaches another server connection, which lacks the statement or
		// holds another client's.
		splitStatement: func(msg string) bool {
			return strings.Contains(msg, "unnamed prepared statement does not exist") ||
				(strings.Contains(msg, "prepared statement") && strings.Contains(msg, "does not exist")) ||
				// pgx's statement cache names a statement by its text: another
				// client's connection to PgBouncer prepared it on this server
				// connection already.
				(strings.Contains(msg, "prepared statement") && strings.Contains(msg, "already exists")) ||
				(strings.Contains(msg, "bind message supplies") && strings.Contains(msg, "prepared statement"))
		},
		grants: []string{
			"GRANT SELECT, INSERT, UPDATE ON idsql_workers TO %s",
			"GRANT USAGE ON SEQUENCE idsql_workers_lease_id_seq TO %s",
			"GRANT SELECT, UPDATE ON idsql_alloc TO %s",
			"GRANT SELECT, INSERT ON idsql_alloc_log TO %s",
			"GRANT USAGE ON SEQUENCE idsql_alloc_log_id_seq TO %s",
			"GRANT SELECT ON idsql_shapes TO %s",
		},
		denied: func(msg string) bool { return strings.Contains(msg, "permission denied for ") },
		splitHint: "the statement was prepared on one server connection and run on another, as PgBouncer in transaction mode does: " +
			"with lib/pq add binary_parameters=yes to the DSN, with pgx set default_query_exec_mode=exec (or simple_protocol), " +
			"or pool in session mode",
		connectHint: func(msg string) string {
			// lib/pq's and pgx's words for a server that does not offer TLS.
			if strings.Contains(msg, "SSL is not enabled on the server") || strings.Contains(msg, "server refused TLS connection") {
				return "the server offers no TLS and the DSN asks for it, as lib/pq does unless told otherwise: " +
					"turn ssl on in the server, or add sslmode=disable to the DSN on a network you trust"
			}
			return ""
		},
	},
	statements: statementSpec{
		foldColumns:     false,
		sessionMode:     false,
		autoIncrementID: false,
		countsUpdates:   false,
	},
	registry: registrySpec{
		// Concurrent CREATE ... IF NOT EXISTS can still collide in the
		// catalog: the migration takes a lock (ddlInTx).
		schema: []string{`
CREATE TABLE IF NOT EXISTS idsql_workers (
	lease_id       BIGSERIAL PRIMARY KEY,
	namespace      TEXT        NOT NULL,
	worker_id      BIGINT      NOT NULL,
	table_name     TEXT        NOT NULL,
	instance       TEXT        NOT NULL,
	host           TEXT        NOT NULL DEFAULT '',
	port           INTEGER     NOT NULL DEFAULT 0,
	pid            INTEGER     NOT NULL DEFAULT 0,
	holder_kind    TEXT        NOT NULL,
	started        TIMESTAMPTZ NOT NULL,
	ids_after      TIMESTAMPTZ NOT NULL,
	last_heartbeat TIMESTAMPTZ NOT NULL,
	last_timestamp TIMESTAMPTZ,
	released       TIMESTAMPTZ,
	expires        TIMESTAMPTZ
)`,
			`CREATE INDEX IF NOT EXISTS idsql_workers_worker ON idsql_workers (namespace, worker_id, ids_after)`,
			`CREATE INDEX IF NOT EXISTS idsql_workers_live ON idsql_workers (namespace, worker_id) WHERE released IS NULL`,
			`CREATE INDEX IF NOT EXISTS idsql_workers_instance ON idsql_workers (namespace, instance, table_name)`,
		},
		ddlInTx:       true,
		timeType:      "timestamptz",
		plusMicros:    "(%s + CAST(%s AS bigint) * interval '1 microsecond')",
		microsUntil:   "CAST(extract(epoch FROM %[2]s - %[1]s) * 1e6 AS bigint)",
		idleTimeout:   "set_config('idle_in_transaction_session_timeout', %s, true)",
		namespaceLock: "SELECT pg_advisory_xact_lock(hashtext('idsql_workers/' || %s))",
		// READ COMMITTED is the default, and every statement of it reads the
		// latest committed rows; FOR UPDATE refuses aggregates.
		readCommitted: false,
		lockingRead:   "",
		zoneless:      false,
		maxName:       0,
		changedRows:   false,
		// idleTimeout ends an idle transaction, not its session.
		sessionIdle: nil,
	},
	defaults: &pgDefaults,
	drivers: []driverType{
		{"github.com/lib/pq", "Driver"},
		{"github.com/jackc/pgx/v5/stdlib", "Driver"},
		{"github.com/jackc/pgx/v4/stdlib", "Driver"},
	},
}
