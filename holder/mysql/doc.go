// Package mysql registers holder.kind "mysql": worker IDs handed out from
// the worker table idsql_workers (see holder/registry) in the
// application's own MySQL or MariaDB database. A program that keeps its
// worker leases there imports it for its side effect:
//
//	import _ "github.com/idsql/idsql/holder/mysql"
//
// with the configuration
//
//	holder: {kind: mysql, mode: lease}
//
// The holder itself is holder/postgres's, which is database-neutral: the
// worker registry speaks the database's SQL (placeholders, the clock, the
// namespace lock) from its dialect. Its modes (sticky, disposable, lease),
// its lease TTL (holder.session_timeout) and its guarantees are described
// there. Rows name the holder as "mysql/<mode>". idsql refuses kind mysql
// on a PostgreSQL database, and kind postgres on a MySQL one.
//
// Until one release after this package appeared, importing holder/postgres
// also makes kind "mysql" available (deprecated).
package mysql
