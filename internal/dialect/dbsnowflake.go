package dialect

import (
	"fmt"
	"hash/fnv"
	"math/bits"
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

	// Shape is the table's key shape (the zero KeyShape: ordered). A
	// spread one moves every key the default composes, as the table's
	// processes move theirs.
	Shape KeyShape

	// Stale is how long after its last heartbeat a process's lease of the
	// chosen worker ID counts as gone (and is ended); a fresher one is
	// refused, naming its process.
	Stale time.Duration
}

// fingerprint names everything the default composes keys from, so that an
// install finds a default that still matches and leaves it alone; "2" is
// the composition (slots and blocks; a default of the first, one shared
// counter, is replaced).
func (s DBSnowflake) fingerprint() string {
	low := 0
	if s.WorkerLow {
		low = 1
	}
	fp := fmt.Sprintf("idsql:2/e%d/u%d/b%d.%d.%d/l%d/m%d", s.Epoch.UnixMicro(), s.Unit.Microseconds(),
		s.TimeBits, s.WorkerBits, s.SequenceBits, low, s.MaxKey)
	if s.Shape.Spread() {
		fp += "/" + shapeTag(s.Shape)
	}
	return fp
}

// pgSlotBits is how many of the sequence bits name a slot on PostgreSQL
// (4 counters per table); mariaSlotBits on MariaDB (16 blocks per
// window); mariaWindow is how long a MariaDB block's window of ticks
// lasts at least.
const (
	pgSlotBits    = 2
	mariaSlotBits = 4
	mariaWindow   = 16 * time.Millisecond
)

// SnowflakeDBDefault returns the one statement that installs the default
// described by s: idempotent, it reserves a worker ID only when the table
// has none, and changes the default only when it does not match s.
//
// No writer holds a lock that another waits for, and no lock is taken
// per row. PostgreSQL (a DO block, one transaction): the column default
// is one call of a PL/pgSQL function of the table's, with no arguments,
// that draws nextval from one of 4 slot sequences (2 of the sequence bits
// name the slot) and composes the key; the first key of a transaction
// picks the slot and holds its advisory lock shared to the transaction's
// end, and a slot's counter moves forward to the clock only while nobody
// holds it (see pgSnowflakeDefault). MariaDB (a
// compound statement): a BEFORE INSERT trigger keys a session's rows
// from a block of its own, kept in user variables, and takes a block of
// ticks and slot from a horizon of sequences under a lock held for a few
// draws (see mariaSnowflakeTrigger). Sequences and user variables are not
// rolled back, so a rolled-back key is never issued again; the counters
// only move forward, so a clock stepped back or outrun stamps keys ahead
// of it and never repeats one. SQLite: ErrNoDBDefault.
func (d Dialect) SnowflakeDBDefault(s DBSnowflake) (string, error) {
	workers := int64(1) << s.WorkerBits
	switch {
	case s.Reserved < 1 || s.Reserved >= workers:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("%d worker IDs for the database, want 1..%d of the layout's %d",
			s.Reserved, workers-1, workers))
	case s.Unit < time.Millisecond || s.Unit%time.Microsecond != 0 || s.Epoch.Truncate(time.Microsecond) != s.Epoch:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("layout unit %s or epoch %s is not whole microseconds", s.Unit, s.Epoch))
	case s.SequenceBits < 2:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("%d sequence bits: the database-side default needs 2 or more", s.SequenceBits))
	}
	w, r, err := d.dbTemplate(s.Table, s.Column, s.Namespace)
	if err != nil {
		return "", err
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	low := "false"
	if s.WorkerLow {
		low = "true"
	}
	k := w.slotBitsOf(s)
	schema, name := DBDefault{Table: s.Table, Column: s.Column}.Sequence()
	seqN := func(n int) string { return d.sequence(s.Table, s.Column, "_"+strconv.Itoa(n)) }
	h := fnv.New64a()
	h.Write([]byte(schema + "." + name))
	tag := fmt.Sprintf("%016x", h.Sum64()) // names the table's setting, variables and lock
	pairs := []string{
		"{ns}", lit(s.Namespace), "{fp}", lit(s.fingerprint()),
		"{epoch}", i(s.Epoch.UnixMicro()), "{unit}", i(s.Unit.Microseconds()),
		"{tb}", strconv.Itoa(s.TimeBits), "{wb}", strconv.Itoa(s.WorkerBits), "{sb}", strconv.Itoa(s.SequenceBits),
		"{k}", strconv.Itoa(k), "{s2}", strconv.Itoa(s.SequenceBits - k), "{wbk}", strconv.Itoa(s.WorkerBits + k),
		"{low}", low, "{first}", i(workers - s.Reserved), "{last}", i(workers - 1), "{maxkey}", i(s.MaxKey),
		"{stale}", i(s.Stale.Microseconds()), "{nslock}", d.namespaceLock(lit(s.Namespace)),
		"{clock}", d.Clock(),
	}
	sf := snowflakeParts{tmpl: w.snowflakeTemplate, r: r, pairs: pairs, k: k, seqN: seqN, tag: tag}
	return w.snowflake(s, sf), nil
}

// snowflakeParts are what SnowflakeDBDefault works out for every database
// before its own composition: the template and the names, the
// replacements so far, the slot bits k, the table's n-th sequence, quoted,
// and the tag naming the table's setting, variables and lock.
type snowflakeParts struct {
	tmpl  string
	r     names
	pairs []string
	k     int
	seqN  func(n int) string
	tag   string
}

// pgSnowflake composes PostgreSQL's snowflake default: slot sequences
// that count by 2^k and a function that draws from them.
func pgSnowflake(s DBSnowflake, sf snowflakeParts) string {
	tmpl, r, pairs, k, seqN, tag := sf.tmpl, sf.r, sf.pairs, sf.k, sf.seqN, sf.tag
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	shapefn := ""
	if s.Shape.Spread() {
		shapefn = pgShapeFunction + ";"
	}
	pairs = append(pairs, "{shapefn}", shapefn)
	var slots []string
	for n := range 1 << k {
		slots = append(slots, lit(seqN(n)))
	}
	// A slot's counter is tick << SequenceBits | n << k | slot: it
	// counts by 2^k, so the key is the counter with the worker's bits
	// placed above its sequence bits.
	compose := fmt.Sprintf("((v >> %d) << %d) | (@W@::bigint << %d) | (v & %d)",
		s.SequenceBits, s.WorkerBits+s.SequenceBits, s.SequenceBits, int64(1)<<s.SequenceBits-1)
	// A later row draws and composes in one expression that uses the
	// drawn value once: overlay on bit(64) places the worker's bits
	// (or, the worker lowest, a shift).
	next := "nextval(nullif(current_setting(" + lit("idsql.o"+tag) + ", true), '')::oid::regclass)"
	draw := fmt.Sprintf("overlay(substring(%s::bit(64) from %d) placing B'@WBITS@' from %d for 0)::bigint",
		next, s.WorkerBits+1, 64-s.WorkerBits-s.SequenceBits+1)
	if s.WorkerLow {
		compose = fmt.Sprintf("(v << %d) | @W@::bigint", s.WorkerBits)
		draw = fmt.Sprintf("(%s << %d) | @W@::bigint", next, s.WorkerBits)
	}
	fname := "idsql_snowflake_key_" + tag
	first := "idsql_snowflake_first_" + tag
	pairs = append(pairs, "{slotseqs}", "ARRAY["+strings.Join(slots, ", ")+"]", "{guc}", lit("idsql.o"+tag),
		"{fname}", fname, "{fnamelit}", lit(fname), "{firstfn}", first, "{firstfnlit}", lit(first), "{n}", strconv.Itoa(1<<k),
		"{m}", strconv.Itoa(1<<k-1), "{lag}", i(max(1, int64(10*time.Millisecond/s.Unit))),
		"{pgcompose}", compose,
		// A spread table's shape moves the key the function returns.
		"{pgreturn}", pgShapeCall(s.Shape, "coalesce("+draw+", "+first+"())", s.Table))
	return r.with(pairs...).Replace(tmpl)
}

// mariaSnowflake composes MariaDB's snowflake default: blocks of window
// ticks drawn by a BEFORE INSERT trigger.
func mariaSnowflake(s DBSnowflake, sf snowflakeParts) string {
	tmpl, r, pairs, k, seqN, tag := sf.tmpl, sf.r, sf.pairs, sf.k, sf.seqN, sf.tag
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	// MariaDB: blocks of window ticks, β = window << k | slot, and the
	// digits (base 256) of the horizon of β.
	window := max(1, int64(mariaWindow/s.Unit))
	levels := (bits.Len64(uint64((int64(1)<<s.TimeBits/window+1)<<k)) + 7) / 8
	var blocks, digits strings.Builder
	blocks.WriteString("\t\t\t\tSET h = ")
	for j := range levels {
		if j > 0 {
			blocks.WriteString(" + ")
		}
		fmt.Fprintf(&blocks, "((SELECT next_not_cached_value FROM %s) << %d)", seqN(j), 8*j)
	}
	blocks.WriteString(";\n\t\t\t\tSET b = GREATEST(h, (t DIV {window}) << {k});\n\t\t\t\tSET d = b + 1 - h;\n")
	for j := range levels {
		mask := " & 255"
		if j == levels-1 {
			mask = ""
		}
		fmt.Fprintf(&blocks, "\t\t\t\tSET n = (d >> %d)%s;\n\t\t\t\tWHILE n > 0 DO\n\t\t\t\t\tSET x = NEXT VALUE FOR %s;\n\t\t\t\t\tSET n = n - 1;\n\t\t\t\tEND WHILE;\n",
			8*j, mask, seqN(j))
		fmt.Fprintf(&digits, "\tCREATE SEQUENCE IF NOT EXISTS %s MINVALUE 0 START WITH 0 NOCACHE NOCYCLE;\n", seqN(j))
		fmt.Fprintf(&digits, "\tEXECUTE IMMEDIATE CONCAT('DO SETVAL(%s, ', (b0 >> %d)%s, ', 0)');\n", seqN(j), 8*j, mask)
	}
	compose := "((@{u}x >> {s2}) << ({wb} + {sb})) | ({worker} << {sb}) | (@{u}s << {s2}) | (@{u}x & ((1 << {s2}) - 1))"
	if s.WorkerLow {
		compose = "((@{u}x >> {s2}) << ({wb} + {sb})) | (((@{u}s << {s2}) | (@{u}x & ((1 << {s2}) - 1))) << {wb}) | {worker}"
	}
	maxcheck := ""
	if s.MaxKey > 0 {
		maxcheck = "\t\tIF NEW.{col} > {maxkey} THEN\n\t\t\tSIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'idsql: a key of table " +
			s.Table + " is past its max_id " + i(s.MaxKey) + "';\n\t\tEND IF;\n"
	}
	if sh := mariaShape(s.Shape, s.Table); sh != "" {
		maxcheck += "\t\tSET k = NEW.{col};\n" + sh + "\t\tSET NEW.{col} = k;\n"
		pairs = append(pairs, "{shapedecl}", mariaShapeDecl)
	} else {
		pairs = append(pairs, "{shapedecl}", "")
	}
	pairs = append(pairs, "{compose}", compose, "{maxcheck}", maxcheck,
		"{window}", i(window), "{u}", "idsql_"+tag+"_", "{lock}", lit("idsql/"+tag),
		"{blocks}", strings.TrimSuffix(blocks.String(), "\n"), "{digits}", strings.TrimSuffix(digits.String(), "\n"))
	// The trigger's text travels as a string literal to EXECUTE
	// IMMEDIATE, with the reserved worker ID spliced in: its names are
	// replaced first.
	trig := r.with(pairs...).Replace(r.with(pairs...).Replace(mariaSnowflakeTrigger))
	body := "'" + strings.ReplaceAll(trig, "'", "''") + "'"
	rep := r.with(append(pairs, "{trigger}", strings.ReplaceAll(body, "{worker}", "', w, '"))...)
	return rep.Replace(rep.Replace(tmpl))
}

// NamespaceLock returns the statement that takes the worker table's lock
// of the namespace the SQL expression ns gives, held to the end of the
// transaction: every lease and database reservation of the namespace is
// recorded under it. PostgreSQL: an advisory lock; MySQL: the row lock of
// an upsert into idsql_worker_locks; "" for SQLite, which has no worker
// table.
func (d Dialect) NamespaceLock(ns string) string {
	if f := d.registry().namespaceLock; f != "" {
		return fmt.Sprintf(f, ns)
	}
	return ""
}

// namespaceLock is NamespaceLock as a statement of a PL/pgSQL or compound
// body, where a SELECT whose result is dropped is a PERFORM.
func (d Dialect) namespaceLock(ns string) string {
	lock := d.NamespaceLock(ns)
	if d.descriptor().defaults.perform {
		return "PERFORM" + strings.TrimPrefix(lock, "SELECT")
	}
	return lock
}

// pgSnowflakeDefault is PostgreSQL's SnowflakeDBDefault statement. A
// session may set idsql.now_us to read its own clock (tests step it), as
// @idsql_now_us on MariaDB.
//
// The counters are the slot sequences {slotseqs}, which count by 2^{k}:
// slot s's values are v = tick << {sb} | n << {k} | s, and a key is
// (tick, worker, n << {k} | s), so slots never share a key and a slot's
// nextval never repeats one. A transaction draws from one slot and holds
// the slot's advisory lock ('idsq' << 32 | the slot sequence's OID)
// shared to its end: no writer ever waits for another's, since writers
// take it shared and the only exclusive holder is {firstfn}, for a few
// statements within one call. A slot's sequence moves forward to the
// clock (setval, to a value of the slot) only under that lock held
// exclusively, taken with a try, so only while no other transaction
// draws from it: setval never lowers a counter under a writer.
//
// The column default is {fname}(), with no arguments: an INSERT
// deserializes and plans its column default every time (a default that
// composed the key with a CASE of built-in functions took 8 KB in
// pg_attrdef against 0.3 KB for BIGSERIAL, and cost more than the rest
// of a 1-row INSERT; BENCHMARKS.md), while a PL/pgSQL function is
// compiled once a session. A row of a transaction that holds a slot (its sequence's OID
// in the transaction-local setting {guc}) draws from it and composes the
// key in one expression; the first row of a transaction calls
// {firstfn}, which takes the slot the pointer sequence {seq} names (its
// value is the slot sequence's OID) shared, draws, and when the value
// lags the clock by more than {lag} ticks moves another slot, free of
// other transactions, to the clock and points the pointer at it. It
// names the slot in {guc} only once the transaction has an ID
// (pg_current_xact_id_if_assigned): an autocommitted 1-row INSERT has
// none when its row is keyed (unless nextval WAL-logged, once in 32
// values), and setting {guc} and resetting it at commit cost it 1-2 µs
// of the backend's CPU for no later row; a second row finds no slot
// named, calls {firstfn} again (taking the slot the pointer names then,
// shared as well) and names it. Both
// functions carry the table's constants in their text (the worker ID is
// spliced in at install); their common paths are small simple
// expressions, since PL/pgSQL builds each anew in every transaction.
const pgSnowflakeDefault = `DO $idsql$
DECLARE
	w bigint;
	hw timestamptz;
	busy text;
	t0 bigint;
	changed boolean := false;
	slots text[] := {slotseqs};
	n int := array_length({slotseqs}, 1);
	s int;
	sq text;
	expr text;
	fn text;
	fn2 text;
	m bigint;
	vmax bigint;
	s2 int := {sb} - {k};
BEGIN
	IF current_setting('server_version_num')::int < 130000 THEN
		RAISE EXCEPTION 'idsql: the database-side default of snowflake table % needs PostgreSQL 13 or later (pg_current_xact_id_if_assigned); this server is %',
			{tablename}, current_setting('server_version');
	END IF;
	PERFORM pg_advisory_xact_lock(8315429662);
	{nslock};
	PERFORM set_config('synchronous_commit', 'on', true);
	{shapefn}
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
	-- The first tick past the horizon of every earlier lease.
	t0 := (floor(extract(epoch FROM hw) * 1000000)::bigint - {epoch}) / {unit} + 1;
	-- The pointer: its value modulo the slots names the slot that first
	-- rows take. (A table that had a segment default has it bounded to a
	-- block.)
	CREATE SEQUENCE IF NOT EXISTS {seq} AS bigint MINVALUE 0 NO CYCLE;
	IF (SELECT seqmax <> 9223372036854775807 OR seqmin <> 0 FROM pg_sequence WHERE seqrelid = {seqlit}::regclass) THEN
		ALTER SEQUENCE {seq} MINVALUE 0 NO MAXVALUE NO CYCLE;
	END IF;
	changed := changed OR NOT EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = to_regclass({tablelit}) AND a.attname = {collit}
		AND position({fnamelit} || '(' IN pg_get_expr(d.adbin, d.adrelid)) > 0)
	OR (SELECT count(*) FROM pg_proc WHERE oid IN (to_regproc({fnamelit}), to_regproc({firstfnlit}))
		AND position({fp} IN prosrc) > 0 AND position(format('worker %s; slots counting by {n}, pointer naming the slot''s OID, one call a row, the slot named from the first row with a transaction ID.', w) IN prosrc) > 0) <> 2
	OR EXISTS (SELECT 1 FROM unnest(slots) x JOIN pg_sequence q ON q.seqrelid = to_regclass(x) WHERE q.seqincrement <> n);
	IF changed THEN
		-- The default changes: no writer of the table runs meanwhile, and
		-- the counter of a default before it (one sequence of tick << {sb}
		-- | n, or a segment block) bounds the first tick too, as do slot
		-- sequences that count by 1 (tick << s2 | n, the slot in the key
		-- above n).
		LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE;
		IF to_regclass({seqlit}) IS NOT NULL THEN
			t0 := greatest(t0, (SELECT (last_value >> {sb}) + 1 FROM {seq}));
		END IF;
		t0 := greatest(t0, (SELECT max((coalesce(pg_sequence_last_value(q.seqrelid), -1) >> s2) + 1)
			FROM unnest(slots) x JOIN pg_sequence q ON q.seqrelid = to_regclass(x) WHERE q.seqincrement = 1));
	END IF;
	-- The greatest counter whose key is within the time bits and max_id.
	vmax := (1::bigint << ({tb} + {sb})) - 1;
	IF {maxkey} > 0 THEN
		m := {maxkey} & ((1::bigint << ({wb} + {sb})) - 1);
		IF {low} THEN
			vmax := CASE WHEN {maxkey} >= w THEN ({maxkey} - w) >> {wb} ELSE -1 END;
		ELSIF m >= w << {sb} THEN
			vmax := (({maxkey} >> ({wb} + {sb})) << {sb}) | least(m - (w << {sb}), (1::bigint << {sb}) - 1);
		ELSE
			vmax := (({maxkey} >> ({wb} + {sb})) << {sb}) - 1;
		END IF;
		vmax := least(vmax, (1::bigint << ({tb} + {sb})) - 1);
	END IF;
	FOR s IN 0 .. n - 1 LOOP
		sq := slots[s + 1];
		EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %s AS bigint MINVALUE 0 NO CYCLE', sq);
		IF (SELECT seqmax <> vmax OR seqincrement <> n FROM pg_sequence WHERE seqrelid = sq::regclass) THEN
			EXECUTE format('ALTER SEQUENCE %s INCREMENT BY %s MAXVALUE %s', sq, n, greatest(vmax, 0));
		END IF;
		-- Moved forward only under the slot's lock held exclusively: this
		-- waits for the transactions that draw from the slot. Its values
		-- are the slot modulo n.
		IF coalesce(pg_sequence_last_value(sq::regclass), -1) < t0 << {sb} THEN
			PERFORM pg_advisory_xact_lock((1768190833::bigint << 32) | sq::regclass::oid::bigint);
			IF coalesce(pg_sequence_last_value(sq::regclass), -1) < t0 << {sb} THEN
				PERFORM setval(sq::regclass, (t0 << {sb}) | s);
			END IF;
		END IF;
	END LOOP;
	-- The pointer names the slot that first rows take: its value is the
	-- slot sequence's OID (a default before this one kept other values).
	IF coalesce(pg_sequence_last_value({seqlit}::regclass), -1) NOT IN (SELECT to_regclass(x)::oid::bigint FROM unnest(slots) x) THEN
		PERFORM setval({seqlit}::regclass, to_regclass(slots[1])::oid::bigint);
	END IF;
	-- The function that keys a transaction's first row (the worker ID is
	-- spliced in for @W@). Its common path is four small simple
	-- expressions with the table's constants in them (PL/pgSQL builds
	-- each expression anew in every transaction) and no PERFORM, which
	-- runs the executor: CASE orders the calls (its condition first).
	fn := $body$CREATE OR REPLACE FUNCTION {firstfn}() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
	-- Table {tablename}, layout {fp}, worker @W@; slots counting by {n}, pointer naming the slot's OID, one call a row, the slot named from the first row with a transaction ID.
	DECLARE
		pv bigint;
		now_us bigint;
		floor_v bigint;
		p int;
		q int;
		sq regclass;
		lk bigint;
		v bigint;
	BEGIN
		-- The pointer: the OID of the slot sequence first rows take.
		pv := pg_sequence_last_value({seqlit}::regclass);
		-- The slot the pointer names, held shared before its first draw
		-- (this waits only while another call moves the slot forward).
		v := CASE WHEN pg_advisory_xact_lock_shared((1768190833::bigint << 32) | pv) IS NULL THEN NULL
			ELSE nextval(pv::oid::regclass) END;
		-- The clock only decides when to move a slot forward (its
		-- microseconds as a float8 here, exact below).
		IF v IS NULL OR v >> {sb} < (coalesce(nullif(current_setting('idsql.now_us', true), '')::bigint,
				(date_part('epoch', clock_timestamp()) * 1000000)::bigint) - {epoch}) / {unit} - {lag} THEN
			IF v IS NULL THEN
				RAISE EXCEPTION 'idsql: the key pointer % of table % names no slot: install its default again', {seqlit}, {tablename};
			END IF;
			now_us := coalesce(nullif(current_setting('idsql.now_us', true), '')::bigint,
				floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
			IF now_us < {epoch} THEN
				RAISE EXCEPTION 'idsql: the database clock reads % µs since 1970, before the epoch of layout %: no key for table %',
					now_us, {fp}, {tablename};
			END IF;
			-- The slot lags the clock by more than {lag} ticks: move
			-- another slot, which no other transaction holds, to the clock
			-- and point at it (v is left unused). A slot's counter is
			-- tick << {sb} | n << {k} | slot.
			floor_v := least((now_us - {epoch}) / {unit}, (1::bigint << {tb}) - 1) << {sb};
			p := v & {m};
			FOR i IN 1 .. {n} - 1 LOOP
				q := (p + i) % {n};
				sq := ({slotseqs})[q + 1]::regclass;
				lk := (1768190833::bigint << 32) | sq::oid::bigint;
				IF pg_try_advisory_lock(lk) THEN
					BEGIN
						IF coalesce(pg_sequence_last_value(sq), -1) < floor_v THEN
							PERFORM setval(sq, floor_v | q);
						END IF;
						PERFORM setval({seqlit}::regclass, sq::oid::bigint);
						PERFORM pg_advisory_xact_lock_shared(lk);
					EXCEPTION WHEN OTHERS OR query_canceled THEN
						PERFORM pg_advisory_unlock(lk);
						RAISE;
					END;
					PERFORM pg_advisory_unlock(lk);
					pv := sq::oid::bigint;
					v := nextval(sq);
					EXIT;
				END IF;
			END LOOP;
		END IF;
		-- The slot the transaction holds, named for the default's later
		-- rows once the transaction has an ID: before, it has written
		-- nothing, and this row is most often its only one (an
		-- autocommitted 1-row INSERT), so the setting and its reset at
		-- commit would be paid for no later row. A later row finds no
		-- slot named, comes here again (the transaction has an ID since
		-- its first row) and names it. (OR evaluates left to right; were
		-- set_config called anyway, only the time would be lost.) The
		-- table's max_id bounds the slot sequences (MAXVALUE).
		RETURN CASE WHEN pg_current_xact_id_if_assigned() IS NULL OR set_config({guc}, pv::text, true) IS NOT NULL
			THEN {pgcompose} END;
	END
	$fn$$body$;
	-- The column default's function: a later row of a transaction draws
	-- from the slot the transaction holds, in one expression; the first
	-- calls {firstfn}. (One expression a row: a PL/pgSQL statement costs
	-- about as much as the rest of a bulk INSERT's row.)
	fn2 := $body$CREATE OR REPLACE FUNCTION {fname}() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
	-- Table {tablename}, layout {fp}, worker @W@; slots counting by {n}, pointer naming the slot's OID, one call a row, the slot named from the first row with a transaction ID.
	BEGIN
		RETURN {pgreturn};
	END
	$fn$$body$;
	-- The column default is one call of {fname}, with no arguments: an
	-- INSERT deserializes and plans the default every time, and a
	-- PL/pgSQL function is compiled once a session.
	expr := {fnamelit} || '()';
	IF changed THEN
		EXECUTE replace(fn, '@W@', w::text);
		EXECUTE replace(replace(fn2, '@W@', w::text), '@WBITS@', w::bit({wb})::text);
		EXECUTE format('ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT %s', expr);
	END IF;
END
$idsql$`

// mariaSnowflakeTrigger is the trigger mariaSnowflakeDefault makes:
// {worker} is the reserved worker ID, {blocks} the statements that take a
// block. The comment at its top names the layout and the worker ID, which
// the install finds. Its common path declares nothing (a DECLARE costs
// MariaDB about a fifth of a bulk load's time with this trigger): the
// next counter goes through the user variable {u}x. A session may set @idsql_now_us to read its own clock (tests step
// it): the clock only moves a session's counter forward, within its block,
// so no reading, however wrong, makes a key repeat.
//
// A session keys its rows from a block of its own, kept in its user
// variables {u}v (the next counter, tick << s2 | n), {u}e (the block's
// end) and {u}s (its slot): no row of a table and no lock is shared per
// row. User variables are not rolled back, so a rolled-back key is never
// issued again; a block ends with its session. A block is one window of
// {window} ticks in one of 2^{k} slots (β = window << {k} | slot), taken
// from the horizon H = Σ 256^j · next(h_j) of the digit sequences
// {seq}_0 .. (MariaDB's sequences are not rolled back either, and SETVAL
// takes literals only: a trigger raises H by drawing each digit's
// sequence as many times as the digit says). H is read and raised under
// GET_LOCK, held for the few draws and released before the trigger
// returns, so blocks never overlap; the next block is the greater of H
// and the clock's window, so the keys follow the clock and never repeat.
const mariaSnowflakeTrigger = `CREATE OR REPLACE TRIGGER {seq} BEFORE INSERT ON {table} FOR EACH ROW
BEGIN
	/* layout {fp}, worker {worker}; blocks in user variables. */
{shapedecl}	IF NEW.{col} IS NULL OR NEW.{col} = 0 THEN
		IF (@{u}x := GREATEST(@{u}v, LEAST((COALESCE(@idsql_now_us, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))) - {epoch}) DIV {unit}, (1 << {tb}) - 1) << {s2})) IS NULL
				OR @{u}e IS NULL OR @{u}x >= @{u}e THEN
			-- A block: the next window and slot past every block handed out.
			BEGIN
				DECLARE now_us BIGINT DEFAULT COALESCE(@idsql_now_us, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {clock}));
				DECLARE t BIGINT;
				DECLARE h BIGINT;
				DECLARE b BIGINT;
				DECLARE d BIGINT;
				DECLARE n BIGINT;
				DECLARE x BIGINT;
				DECLARE msg VARCHAR(512);
				DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN DO RELEASE_LOCK({lock}); RESIGNAL; END;
				IF now_us < {epoch} THEN
					SET msg = CONCAT('idsql: the database clock reads ', now_us, ' microseconds since 1970, before the epoch of layout ',
						{fp}, ': no key for table ', {tablename});
					SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
				END IF;
				SET t = LEAST((now_us - {epoch}) DIV {unit}, (1 << {tb}) - 1);
				IF GET_LOCK({lock}, 30) IS NOT TRUE THEN
					SET msg = CONCAT('idsql: no block of keys for table ', {tablename}, ': its lock ', {lock}, ' is held');
					SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
				END IF;
{blocks}
				DO RELEASE_LOCK({lock});
				SET @{u}s = b & ((1 << {k}) - 1);
				SET @{u}v = ((b >> {k}) * {window}) << {s2};
				SET @{u}e = LEAST(((b >> {k}) + 1) * {window}, 1 << {tb}) << {s2};
				SET @{u}x = GREATEST(@{u}v, t << {s2});
				IF @{u}x >= @{u}e THEN
					SET msg = CONCAT('idsql: the time bits of layout ', {fp}, ' are used up: no key for table ', {tablename});
					SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
				END IF;
			END;
		END IF;
		SET @{u}v = @{u}x + 1, NEW.{col} = {compose};
{maxcheck}	END IF;
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
	DECLARE t0 BIGINT DEFAULT NULL;
	DECLARE b0 BIGINT DEFAULT NULL;
	DECLARE changed BOOLEAN DEFAULT FALSE;
	-- An error must not leave the transaction, and the namespace lock, open
	-- on a pooled connection.
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
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
	-- The first tick past the horizon of every earlier lease, and past the
	-- counter of an earlier install (a row of idsql_db_keys), with a
	-- minute to spare: its trigger may still key rows until the new one
	-- replaces it, a few statements on.
	SET t0 = (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', hw) - {epoch}) DIV {unit} + 1;
	IF EXISTS (SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'idsql_db_keys') THEN
		SET t0 = GREATEST(t0, COALESCE((SELECT (last_value >> {sb}) + 1 + 60000000 DIV {unit} FROM idsql_db_keys WHERE counter = {seqlit}), t0));
	END IF;
	COMMIT;
	-- The horizon's digits: SETVAL only moves a sequence forward, so H
	-- ends at or past the first block past t0.
	SET b0 = ((t0 + {window} - 1) DIV {window}) << {k};
{digits}
	IF changed OR NOT EXISTS (SELECT 1 FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TRIGGER_NAME = {seqnamelit}
		AND LOCATE({fp}, ACTION_STATEMENT) > 0
		AND LOCATE(CONCAT(', worker ', w, '; blocks in user variables.'), ACTION_STATEMENT) > 0)
	OR NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TABLE_NAME = {tablenamelit}
		AND COLUMN_NAME = {collit} AND COLUMN_DEFAULT = '0') THEN
		EXECUTE IMMEDIATE CONCAT({trigger});
		-- INSERT ... SELECT checks for a default before the trigger runs.
		ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT 0;
	END IF;
END`
