package registry

import "github.com/idsql/idsql/internal/dialect"

// columns are the columns of a Record, in the order scan reads them.
const columns = `lease_id, namespace, worker_id, table_name, instance, host, port, pid, holder_kind,
	started, ids_after, last_heartbeat, last_timestamp, released`

// statements are the registry's statements, each written once and
// rendered in the registry's dialect: its bind parameters (Rebind), time
// parameters (TimeParam, whose arguments are TimeArg's), database clock
// (Clock) and the rest of what internal/dialect says of the worker table.
type statements struct {
	// reserved: the table a database-side default reserves the worker ID
	// for (namespace, worker, dialect.DBInstance).
	reserved string
	// end: end the live rows of a worker ID (released, namespace, worker).
	end string
	// highWater: the latest timestamp persisted for a worker ID
	// (namespace, worker), read after end.
	highWater string
	// insert: record a lease (namespace ... pid, kind, started, ids_after,
	// last_heartbeat, expires in microseconds or NULL, last_timestamp); it
	// returns lease_id where the dialect's KeyBack is Returning.
	insert string
	// heartbeat: renew a live, unexpired row (heartbeat time, horizon,
	// horizon, expires in microseconds or NULL, lease ID), committing
	// durably on its own; one row affected means it was live.
	heartbeat string
	// release: end a lease (released, last_timestamp or NULL, lease ID),
	// committing durably on its own.
	release string
	// find: the latest row whose ids_after is before a time (namespace,
	// worker, time).
	find string
	// leases: a namespace's rows, newest first (namespace, live only).
	leases string
	// live: the latest live, unexpired row of a worker ID, with the
	// microseconds left of its expiry or NULL (namespace, worker).
	live string
}

// render writes the statements in d.
func render(d dialect.Dialect) statements {
	at := d.TimeParam("?")
	// A row is live until released, or until its database-clock expiry.
	live := `released IS NULL AND (expires IS NULL OR expires > ` + d.Clock() + `)`
	insert := `INSERT INTO idsql_workers (namespace, worker_id, table_name, instance, host, port, pid,
			holder_kind, started, ids_after, last_heartbeat, expires, last_timestamp)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ` + at + `, ` + at + `, ` + at + `,
			` + d.PlusMicroseconds(d.Clock(), "?") + `, ` + at + `)`
	if d.KeyBack() == dialect.Returning {
		insert += ` RETURNING lease_id`
	}
	// Where RowsAffected counts changed rows only, a heartbeat must change
	// a live row even when the registry's clock stands still or steps
	// back: its last_heartbeat moves forward at least a microsecond.
	// Assignments do not read a column assigned before them (MySQL runs
	// them left to right, each seeing the ones before).
	// A heartbeat or release is one statement, whose own transaction
	// commits durably where the dialect can make it (DurableCommitExpr,
	// evaluated as a FROM item): no transaction spans round trips, so a
	// process paused in one holds no lock, and it takes one round trip.
	durable := ""
	if expr := d.DurableCommitExpr(); expr != "" {
		durable = ` FROM (SELECT ` + expr + ` AS durable) AS commit_durably`
	}
	beat := at
	if d.ChangedRows() {
		beat = `GREATEST(` + at + `, ` + d.PlusMicroseconds("last_heartbeat", "1") + `)`
	}
	return statements{
		reserved: d.Rebind(`SELECT table_name FROM idsql_workers
		WHERE namespace = ? AND worker_id = ? AND released IS NULL AND instance = ?`),
		end: d.Rebind(`UPDATE idsql_workers SET released = ` + at + `
		WHERE namespace = ? AND worker_id = ? AND released IS NULL`),
		// GREATEST is NULL on MySQL when an argument is.
		highWater: d.Rebind(`SELECT MAX(GREATEST(COALESCE(last_timestamp, ids_after), ids_after)) FROM idsql_workers
		WHERE namespace = ? AND worker_id = ?` + d.LockingRead()),
		insert: d.Rebind(insert),
		heartbeat: d.Rebind(`UPDATE idsql_workers SET
			last_heartbeat = ` + beat + `,
			last_timestamp = COALESCE(GREATEST(last_timestamp, ` + at + `), ` + at + `, last_timestamp),
			expires = COALESCE(` + d.PlusMicroseconds(d.Clock(), "?") + `, expires)` + durable + `
		WHERE lease_id = ? AND ` + live),
		release: d.Rebind(`UPDATE idsql_workers SET released = ` + at + `,
			last_timestamp = COALESCE(` + at + `, last_timestamp)` + durable + `
		WHERE lease_id = ? AND released IS NULL`),
		find: d.Rebind(`SELECT ` + columns + ` FROM idsql_workers
		WHERE namespace = ? AND worker_id = ? AND ids_after < ` + at + `
		ORDER BY ids_after DESC, lease_id DESC LIMIT 1`),
		leases: d.Rebind(`SELECT ` + columns + ` FROM idsql_workers
		WHERE namespace = ? AND (NOT ? OR released IS NULL)
		ORDER BY lease_id DESC`),
		live: d.Rebind(`SELECT ` + columns + `, ` + d.MicrosecondsUntil("expires") + `
		FROM idsql_workers
		WHERE namespace = ? AND worker_id = ? AND ` + live + `
		ORDER BY lease_id DESC LIMIT 1`),
	}
}
