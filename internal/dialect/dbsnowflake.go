package dialect

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DBSnowflake describes a database-side default for a snowflake table's
// key column. The database composes the keys itself, under a worker ID
// reserved for it in idsql_workers: a row of instance DBInstance for the
// table, taken from the top Reserved worker IDs of the layout's range
// (holder.database_workers), which no holder hands to a process, and which
// never ends. The keys are unique without trusting the database clock:
// each comes from one counter of tick<<SequenceBits | sequence that only
// moves forward (a clock behind it, stepped back or outrun, stamps the
// keys ahead of it), and that starts past the horizon every earlier lease
// of the worker ID persisted.
type DBSnowflake struct {
	Namespace string // idsql_workers.namespace
	Table     string // the configured table name, [schema.]table
	Column    string // the key column

	Epoch        time.Time     // the layout's epoch, a whole microsecond
	Unit         time.Duration // the layout's tick, a whole microsecond
	TimeBits     int
	WorkerBits   int
	SequenceBits int
	WorkerLow    bool // the worker ID in the lowest bits (snowflake.Layout.WorkerLow)

	Reserved int64 // how many worker IDs at the top of the range are the database's
	MaxKey   int64 // the table's max_id; 0 for none

	// Stale is how long after its last heartbeat a process's lease of the
	// chosen worker ID counts as gone (and is ended); a fresher one is
	// refused, naming its process.
	Stale time.Duration
}

// fingerprint names everything the default composes keys from, so that an
// install finds a default that still matches and leaves it alone.
func (s DBSnowflake) fingerprint() string {
	low := 0
	if s.WorkerLow {
		low = 1
	}
	return fmt.Sprintf("idsql:e%d/u%d/b%d.%d.%d/l%d/m%d", s.Epoch.UnixMicro(), s.Unit.Microseconds(),
		s.TimeBits, s.WorkerBits, s.SequenceBits, low, s.MaxKey)
}

// SnowflakeDBDefault returns the one statement that installs the default
// described by s: idempotent, it reserves a worker ID only when the table
// has none, and changes the default only when it does not match s.
//
// PostgreSQL (a DO block, one transaction): the counter is a sequence;
// idsql_snowflake_key takes it under a session-level advisory lock of
// that sequence, released before the function returns, so the lock
// serialises the database-side writers of that one table for a few
// microseconds each and never lasts to the end of their transactions.
// nextval and setval do not roll back, so a rolled-back key is never
// issued again. MariaDB (a compound statement): a BEFORE INSERT trigger
// fills a NULL or 0 key from the counter's row in idsql_db_keys
// (MariaDB's SETVAL takes only literals, and no dynamic SQL runs in a
// trigger), so that row's lock serialises the database-side writers of
// the table until each one's transaction ends. SQLite: ErrNoDBDefault.
func (d Dialect) SnowflakeDBDefault(s DBSnowflake) (string, error) {
	workers := int64(1) << s.WorkerBits
	switch {
	case s.Reserved < 1 || s.Reserved >= workers:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("%d worker IDs for the database, want 1..%d of the layout's %d",
			s.Reserved, workers-1, workers))
	case s.Unit < time.Millisecond || s.Unit%time.Microsecond != 0 || s.Epoch.Truncate(time.Microsecond) != s.Epoch:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("layout unit %s or epoch %s is not whole microseconds", s.Unit, s.Epoch))
	}
	tmpl, r, err := d.dbTemplate(pgSnowflakeDefault, mariaSnowflakeDefault, s.Table, s.Column, s.Namespace)
	if err != nil {
		return "", err
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	low := "false"
	if s.WorkerLow {
		low = "true"
	}
	pairs := []string{
		"{ns}", lit(s.Namespace), "{fp}", lit(s.fingerprint()),
		"{epoch}", i(s.Epoch.UnixMicro()), "{unit}", i(s.Unit.Microseconds()),
		"{tb}", strconv.Itoa(s.TimeBits), "{wb}", strconv.Itoa(s.WorkerBits), "{sb}", strconv.Itoa(s.SequenceBits),
		"{low}", low, "{first}", i(workers - s.Reserved), "{last}", i(workers - 1), "{maxkey}", i(s.MaxKey),
		"{stale}", i(s.Stale.Microseconds()), "{nslock}", d.namespaceLock(lit(s.Namespace)),
		"{clock}", d.Clock(),
	}
	rep := r.with(pairs...)
	if d == MySQL {
		// The trigger's text travels as a string literal to EXECUTE
		// IMMEDIATE, with the reserved worker ID spliced in.
		body := "'" + strings.ReplaceAll(rep.Replace(mariaSnowflakeTrigger), "'", "''") + "'"
		rep = r.with(append(pairs, "{trigger}", strings.Replace(body, "{worker}", "', w, '", 1))...)
	}
	return rep.Replace(tmpl), nil
}

// NamespaceLock returns the statement that takes the worker table's lock
// of the namespace the SQL expression ns gives, held to the end of the
// transaction: every lease and database reservation of the namespace is
// recorded under it. PostgreSQL: an advisory lock; MySQL: the row lock of
// an upsert into idsql_worker_locks; "" for SQLite, which has no worker
// table.
func (d Dialect) NamespaceLock(ns string) string {
	switch d {
	case PostgreSQL:
		return d.XactLock("hashtext('idsql_workers/' || " + ns + ")")
	case MySQL:
		return "INSERT INTO idsql_worker_locks (namespace) VALUES (" + ns + ") ON DUPLICATE KEY UPDATE namespace = namespace"
	}
	return ""
}

// namespaceLock is NamespaceLock as a statement of a PL/pgSQL or compound
// body, where a SELECT whose result is dropped is a PERFORM.
func (d Dialect) namespaceLock(ns string) string {
	lock := d.NamespaceLock(ns)
	if d == PostgreSQL {
		return "PERFORM" + strings.TrimPrefix(lock, "SELECT")
	}
	return lock
}

// pgSnowflakeDefault is PostgreSQL's SnowflakeDBDefault statement. A
// session may set idsql.now_us to read its own clock (tests step it), as
// @idsql_now_us on MariaDB. The counter's lock is the advisory lock
// ('idsq' << 32 | the sequence's OID): idsql_snowflake_key takes it at
// session level around nextval and setval; an install takes it to the end
// of its transaction before it moves the sequence forward.
const pgSnowflakeDefault = `DO $idsql$
DECLARE
	w bigint;
	hw timestamptz;
	busy text;
	v0 bigint;
	changed boolean := false;
BEGIN
	PERFORM pg_advisory_xact_lock(8315429662);
	{nslock};
	PERFORM set_config('synchronous_commit', 'on', true);
	CREATE OR REPLACE FUNCTION idsql_snowflake_key(seq regclass, tbl text, layout text, worker bigint,
		epoch_us bigint, unit_us bigint, time_bits int, worker_bits int, seq_bits int, worker_low boolean,
		max_key bigint) RETURNS bigint
	LANGUAGE plpgsql VOLATILE AS $fn$
	DECLARE
		now_us bigint := coalesce(nullif(current_setting('idsql.now_us', true), '')::bigint,
			floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
		lock_key bigint := (1768190833::bigint << 32) | seq::oid::bigint;
		floor_v bigint;
		v bigint;
		tick bigint;
		n bigint;
		id bigint;
	BEGIN
		IF now_us < epoch_us THEN
			RAISE EXCEPTION 'idsql: the database clock reads % µs since 1970, before the epoch of layout %: no key for table %',
				now_us, layout, tbl;
		END IF;
		floor_v := least((now_us - epoch_us) / unit_us, 1::bigint << time_bits) << seq_bits;
		PERFORM pg_advisory_lock(lock_key);
		BEGIN
			v := nextval(seq);
			IF v < floor_v THEN
				PERFORM setval(seq, floor_v);
				v := floor_v;
			END IF;
		EXCEPTION WHEN OTHERS OR query_canceled THEN
			PERFORM pg_advisory_unlock(lock_key);
			RAISE;
		END;
		PERFORM pg_advisory_unlock(lock_key);
		tick := v >> seq_bits;
		n := v & ((1::bigint << seq_bits) - 1);
		IF (tick >> time_bits) <> 0 THEN
			RAISE EXCEPTION 'idsql: the time bits of layout % are used up: no key for table %', layout, tbl;
		END IF;
		IF worker_low THEN
			id := (tick << (worker_bits + seq_bits)) | (n << worker_bits) | worker;
		ELSE
			id := (tick << (worker_bits + seq_bits)) | (worker << seq_bits) | n;
		END IF;
		IF max_key > 0 AND id > max_key THEN
			RAISE EXCEPTION 'idsql: key % of table % is past its max_id %', id, tbl, max_key;
		END IF;
		RETURN id;
	END
	$fn$;
	SELECT worker_id INTO w FROM idsql_workers
	WHERE namespace = {ns} AND table_name = {tablename} AND instance = {instance} AND released IS NULL
	ORDER BY lease_id DESC LIMIT 1;
	IF w IS NULL THEN
		SELECT g INTO w FROM generate_series({first}::bigint, {last}::bigint) g
		WHERE NOT EXISTS (SELECT 1 FROM idsql_workers r WHERE r.namespace = {ns} AND r.worker_id = g
			AND r.released IS NULL AND r.instance = {instance})
		ORDER BY g LIMIT 1;
		IF w IS NULL THEN
			RAISE EXCEPTION 'idsql: the % database workers (%..%) of namespace % all serve other tables: raise holder.database_workers in every process''s configuration first',
				{last} - {first} + 1, {first}, {last}, {ns};
		END IF;
		SELECT format('host %s pid %s, instance %s, table %s, lease %s', host, pid, instance, table_name, lease_id) INTO busy
		FROM idsql_workers WHERE namespace = {ns} AND worker_id = w AND released IS NULL
			AND (expires > clock_timestamp() OR (expires IS NULL AND last_heartbeat > clock_timestamp() - {stale} * interval '1 microsecond'))
		ORDER BY lease_id DESC LIMIT 1;
		IF busy IS NOT NULL THEN
			RAISE EXCEPTION 'idsql: worker % of namespace %, kept for the database by holder.database_workers, is leased to %: give every process holder.database_workers and restart it, then install again',
				w, {ns}, busy;
		END IF;
		-- Leases of processes gone: their horizons still bound the keys.
		UPDATE idsql_workers SET released = clock_timestamp()
		WHERE namespace = {ns} AND worker_id = w AND released IS NULL;
		SELECT max(greatest(last_timestamp, ids_after)) INTO hw FROM idsql_workers
		WHERE namespace = {ns} AND worker_id = w;
		INSERT INTO idsql_workers (namespace, worker_id, table_name, instance, host, port, pid, holder_kind,
			started, ids_after, last_heartbeat)
		VALUES ({ns}, w, {tablename}, {instance}, coalesce(host(inet_server_addr()), ''), coalesce(inet_server_port(), 0),
			pg_backend_pid(), {instance}, clock_timestamp(), greatest(clock_timestamp(), hw), clock_timestamp());
		changed := true;
	END IF;
	SELECT ids_after INTO hw FROM idsql_workers
	WHERE namespace = {ns} AND worker_id = w AND instance = {instance} AND released IS NULL;
	v0 := ((floor(extract(epoch FROM hw) * 1000000)::bigint - {epoch}) / {unit} + 1) << {sb};
	CREATE SEQUENCE IF NOT EXISTS {seq} AS bigint MINVALUE 0 NO CYCLE;
	-- A table that was a segment table has its sequence bounded to a block.
	IF (SELECT seqmax FROM pg_sequence WHERE seqrelid = {seqlit}::regclass) <> 9223372036854775807 THEN
		ALTER SEQUENCE {seq} MINVALUE 0 NO MAXVALUE NO CYCLE;
	END IF;
	-- The counter's lock, to the end of this transaction (a session lock
	-- left behind by an error would stall the table's writers).
	PERFORM pg_advisory_xact_lock((1768190833::bigint << 32) | {seqlit}::regclass::oid::bigint);
	PERFORM setval({seqlit}, v0) FROM {seq} WHERE last_value < v0;
	IF changed OR NOT EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = to_regclass({tablelit}) AND a.attname = {collit}
		AND position('idsql_snowflake_key(' IN pg_get_expr(d.adbin, d.adrelid)) > 0
		AND position({fp} IN pg_get_expr(d.adbin, d.adrelid)) > 0) THEN
		EXECUTE format('ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT idsql_snowflake_key(%L::regclass, %L, %L, %s, {epoch}, {unit}, {tb}, {wb}, {sb}, {low}, {maxkey})',
			{seqlit}, {tablename}, {fp}, w);
	END IF;
END
$idsql$`

// mariaSnowflakeTrigger is the trigger mariaSnowflakeDefault makes:
// {worker} is the reserved worker ID. A session may set @idsql_now_us to
// read its own clock (tests step it): the clock only moves the counter
// forward, so no reading, however wrong, makes a key repeat.
const mariaSnowflakeTrigger = `CREATE OR REPLACE TRIGGER {seq} BEFORE INSERT ON {table} FOR EACH ROW
BEGIN
	DECLARE layout VARCHAR(255) DEFAULT {fp};
	DECLARE worker BIGINT DEFAULT {worker};
	DECLARE now_us BIGINT;
	DECLARE v BIGINT DEFAULT NULL;
	DECLARE msg VARCHAR(512);
	IF NEW.{col} IS NULL OR NEW.{col} = 0 THEN
		SET now_us = COALESCE(@idsql_now_us, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {clock}));
		IF now_us < {epoch} THEN
			SET msg = CONCAT('idsql: the database clock reads ', now_us, ' microseconds since 1970, before the epoch of layout ',
				layout, ': no key for table ', {tablename});
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		SELECT last_value INTO v FROM idsql_db_keys WHERE counter = {seqlit} FOR UPDATE;
		IF v IS NULL THEN
			SET msg = CONCAT('idsql: idsql_db_keys has no counter ', {seqlit}, ' for table ', {tablename},
				': run "idsql migrate --db-defaults"');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		SET v = GREATEST(v + 1, LEAST((now_us - {epoch}) DIV {unit}, 1 << {tb}) << {sb});
		IF (v >> {sb}) >> {tb} <> 0 THEN
			SET msg = CONCAT('idsql: the time bits of layout ', layout, ' are used up: no key for table ', {tablename});
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		UPDATE idsql_db_keys SET last_value = v WHERE counter = {seqlit};
		IF {low} THEN
			SET NEW.{col} = ((v >> {sb}) << ({wb} + {sb})) | ((v & ((1 << {sb}) - 1)) << {wb}) | worker;
		ELSE
			SET NEW.{col} = ((v >> {sb}) << ({wb} + {sb})) | (worker << {sb}) | (v & ((1 << {sb}) - 1));
		END IF;
		IF {maxkey} > 0 AND NEW.{col} > {maxkey} THEN
			SET msg = CONCAT('idsql: key ', NEW.{col}, ' of table ', {tablename}, ' is past its max_id ', {maxkey});
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
	END IF;
END`

// mariaSnowflakeDefault is MariaDB's SnowflakeDBDefault statement. The
// reservation commits before the trigger is made (DDL commits by itself):
// a failure in between leaves a reserved worker ID without a trigger,
// which the next install finds and completes.
const mariaSnowflakeDefault = `BEGIN NOT ATOMIC
	DECLARE w BIGINT DEFAULT NULL;
	DECLARE hw DATETIME(6) DEFAULT NULL;
	DECLARE busy VARCHAR(1000) DEFAULT NULL;
	DECLARE msg VARCHAR(1000) DEFAULT NULL;
	DECLARE v0 BIGINT DEFAULT NULL;
	DECLARE changed BOOLEAN DEFAULT FALSE;
	-- An error must not leave the transaction, and the namespace lock, open
	-- on a pooled connection.
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	CREATE TABLE IF NOT EXISTS idsql_db_keys (
		counter    VARCHAR(191) NOT NULL PRIMARY KEY,
		last_value BIGINT       NOT NULL
	) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	START TRANSACTION;
	{nslock};
	SET w = (SELECT worker_id FROM idsql_workers WHERE namespace = {ns} AND table_name = {tablename}
		AND instance = {instance} AND released IS NULL ORDER BY lease_id DESC LIMIT 1);
	IF w IS NULL THEN
		SET w = {first};
		WHILE w <= {last} AND EXISTS (SELECT 1 FROM idsql_workers WHERE namespace = {ns} AND worker_id = w
			AND released IS NULL AND instance = {instance}) DO
			SET w = w + 1;
		END WHILE;
		IF w > {last} THEN
			SET msg = CONCAT('idsql: the ', {last} - {first} + 1, ' database workers (', {first}, '..', {last}, ') of namespace ', {ns},
				' all serve other tables: raise holder.database_workers in every process''s configuration first');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		SET busy = (SELECT CONCAT('host ', host, ' pid ', pid, ', instance ', instance, ', table ', table_name, ', lease ', lease_id)
			FROM idsql_workers WHERE namespace = {ns} AND worker_id = w AND released IS NULL
			AND (expires > {clock} OR (expires IS NULL AND last_heartbeat > {clock} - INTERVAL {stale} MICROSECOND))
			ORDER BY lease_id DESC LIMIT 1);
		IF busy IS NOT NULL THEN
			SET msg = CONCAT('idsql: worker ', w, ' of namespace ', {ns}, ', kept for the database by holder.database_workers, is leased to ', busy,
				': give every process holder.database_workers and restart it, then install again');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		UPDATE idsql_workers SET released = {clock}
		WHERE namespace = {ns} AND worker_id = w AND released IS NULL;
		SELECT MAX(GREATEST(COALESCE(last_timestamp, ids_after), ids_after)) INTO hw FROM idsql_workers
		WHERE namespace = {ns} AND worker_id = w FOR UPDATE;
		INSERT INTO idsql_workers (namespace, worker_id, table_name, instance, host, port, pid, holder_kind,
			started, ids_after, last_heartbeat)
		VALUES ({ns}, w, {tablename}, {instance}, @@hostname, @@port, CONNECTION_ID(), {instance},
			{clock}, GREATEST({clock}, COALESCE(hw, {clock})), {clock});
		SET changed = TRUE;
	END IF;
	SET hw = (SELECT ids_after FROM idsql_workers WHERE namespace = {ns} AND worker_id = w
		AND instance = {instance} AND released IS NULL ORDER BY lease_id DESC LIMIT 1);
	SET v0 = ((TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', hw) - {epoch}) DIV {unit} + 1) << {sb};
	INSERT INTO idsql_db_keys (counter, last_value) VALUES ({seqlit}, v0)
		ON DUPLICATE KEY UPDATE last_value = GREATEST(last_value, VALUES(last_value));
	COMMIT;
	IF changed OR NOT EXISTS (SELECT 1 FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TRIGGER_NAME = {seqnamelit}
		AND LOCATE({fp}, ACTION_STATEMENT) > 0
		AND LOCATE(CONCAT('worker BIGINT DEFAULT ', w, ';'), ACTION_STATEMENT) > 0)
	OR NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TABLE_NAME = {tablenamelit}
		AND COLUMN_NAME = {collit} AND COLUMN_DEFAULT = '0') THEN
		EXECUTE IMMEDIATE CONCAT({trigger});
		-- INSERT ... SELECT checks for a default before the trigger runs.
		ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT 0;
	END IF;
END`
