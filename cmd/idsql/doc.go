// Command idsql is idsql's command-line tool and HTTP ID server.
//
// It is how people first meet idsql (`go run ./cmd/idsql demo` needs no
// server at all) and how operators look inside a deployment: decode and
// look up IDs, create idsql's tables, list worker leases and segment keys,
// and run the Leaf-compatible ID server of package server.
//
//	idsql demo [--dsn DSN]                  a tour on an embedded SQLite file (no server needed), or on DSN
//	idsql decode [--config F | --layout L] [--json] ID...
//	idsql lookup --dsn DSN [--config F] ID...
//	idsql migrate --dsn DSN --config F [--db-defaults [--db-block N] [--dry-run]]
//	idsql sql --dialect postgres|mysql [--config F] [--db-block N]
//	idsql bounds [--config F] --table T --from TIME --to TIME [--json]
//	idsql partitions [--config F] --table T --from YYYY-MM [--months N]
//	idsql workers --dsn DSN [--config F | --namespace NS] [--all]
//	idsql segments --dsn DSN
//	idsql serve [--config F --dsn DSN] [--addr 127.0.0.1:8080]
//
// A --dsn is a PostgreSQL URL or key=value DSN (lib/pq), a MySQL or
// MariaDB DSN (go-sql-driver/mysql), either mysql://user:pass@host:port/db
// or the driver's own user:pass@tcp(host:port)/db, or sqlite:PATH for
// idsql's SQLite file (the segment store; an application keeps its own
// tables in another file, as the demo does); $IDSQL_DSN is the default. Parameters of a MySQL DSN go to
// the driver (parseTime is on unless given), except idsql's own:
// accept_lazy_commits=true, which lets the worker table record leases on a
// server that does not make every commit durable, one_writer_node=true,
// which says every process writes to a Galera cluster through one node,
// and ssl-ca, ssl-cert and ssl-key, the files of a private TLS authority
// and a client certificate. The worker registry (idsql_workers) is on
// PostgreSQL and MySQL, so on SQLite lookup traces segment IDs only.
//
// Run `idsql COMMAND --help` for each command's flags. Errors go to
// standard error; the exit code is 1 for failures and 2 for usage errors.
package main
