package dialect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoDBDefault is wrapped by the error of a database that cannot serve
// keys from a block of idsql's segment ranges in a column default.
var ErrNoDBDefault = errors.New("dialect: no database-side key default on this database")

// DBInstance is the instance under which a database-side default's blocks
// are logged in idsql_alloc_log.
const DBInstance = "database"

// DBDefault describes a database-side default for a segment table's key
// column: the keys come from a block of Block keys allocated from the
// segment key Key in idsql_alloc, logged in idsql_alloc_log under the
// instance DBInstance, and served by a sequence bounded to the block.
type DBDefault struct {
	Table  string // the configured table name, [schema.]table
	Column string // the key column
	Key    string // the segment key (idsql_alloc.biz_tag)
	Block  int64  // keys per block, > 0
	MaxID  int64  // the largest key a block may hold

	// Shape is the table's key shape (the zero KeyShape: ordered). A
	// spread one moves every key the sequence gives, as the table's
	// processes move theirs; MaxID must be within what it takes (MaxKey).
	Shape KeyShape
}

// Sequence returns the name of the sequence serving the default: the
// table's name with _<column>_idsql, in the table's schema, unquoted.
func (s DBDefault) Sequence() (schema, name string) {
	parts := nameParts(s.Table)
	name = parts[len(parts)-1] + "_" + s.Column + "_idsql"
	if len(parts) == 2 {
		schema = parts[0]
	}
	return schema, name
}

// DBDefaultHint is what a used-up block's error tells the reader to run.
const DBDefaultHint = `run "idsql migrate --db-defaults" to allocate a fresh block and move the sequence to it`

// DBDefault returns the one statement that installs the default described
// by s, or moves its sequence to a fresh block: idempotent, it allocates a
// block only when there is no sequence yet, or its block has less than a
// tenth left. PostgreSQL: a DO block, in one transaction (the block is
// allocated, logged and the sequence moved together; the default is
// idsql_next_key(sequence, table), which calls nextval and turns a
// used-up block's error into one naming the command that extends it).
// MariaDB: a compound statement (BEGIN NOT ATOMIC); the allocation commits
// before the sequence is altered (DDL commits by itself), so a failure in
// between leaves a logged block unused, never a key twice. A spread
// s.Shape shapes each key (see dbshape.go): PostgreSQL's default becomes
// idsql_shape_key(idsql_next_key(...), ...); MariaDB's column default
// becomes 0 and a BEFORE INSERT trigger draws NEXT VALUE FOR and shapes
// the key. SQLite has no sequences: ErrNoDBDefault. MySQL 8 has none
// either; its callers check the server (see ErrNoDBDefault) before running
// the MariaDB form.
func (d Dialect) DBDefault(s DBDefault) (string, error) {
	spread := s.Shape.Spread()
	switch {
	case s.Block <= 0 || s.MaxID < s.Block:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("block of %d keys below %d", s.Block, s.MaxID))
	case spread && s.MaxID > s.Shape.MaxKey:
		return "", d.dbDefaultError(s.Table, s.Column, fmt.Errorf("max_id %d beyond %d, what shape %s takes", s.MaxID, s.Shape.MaxKey, s.Shape.Name))
	}
	w, r, err := d.dbTemplate(s.Table, s.Column, s.Key)
	if err != nil {
		return "", err
	}
	pairs := []string{
		"{key}", lit(s.Key),
		"{block}", strconv.FormatInt(s.Block, 10), "{maxid}", strconv.FormatInt(s.MaxID, 10),
		"{hint}", lit(DBDefaultHint),
	}
	return w.segment(s, w.segmentTemplate, r, pairs), nil
}

// pgSegment composes PostgreSQL's segment default: a sequence bounded to
// the block and a column default that shapes what it draws.
func pgSegment(s DBDefault, tmpl string, r names, pairs []string) string {
	spread := s.Shape.Spread()
	shapefn, match := "", "position('idsql_shape_key(' IN pg_get_expr(d.adbin, d.adrelid)) = 0"
	if spread {
		shapefn = pgShapeFunction + ";"
		match = "position(" + lit(shapeTag(s.Shape)) + " IN pg_get_expr(d.adbin, d.adrelid)) > 0"
	}
	pairs = append(pairs, "{shapefn}", shapefn, "{shapematch}", match,
		"{default}", pgShapeCall(s.Shape, "idsql_next_key({seqlit}::regclass, {tablename})", s.Table))
	rep := r.with(pairs...)
	return rep.Replace(rep.Replace(tmpl))
}

// mariaSegment composes MariaDB's segment default: the sequence as the
// column default, or for a spread table a trigger that shapes the key.
func mariaSegment(s DBDefault, tmpl string, r names, pairs []string) string {
	spread := s.Shape.Spread()
	install := mariaSequenceDefault
	if spread {
		// A column default cannot apply the shape: a trigger draws from
		// the sequence and shapes the key.
		trig := r.with(pairs...).Replace(strings.NewReplacer(
			"{tagtext}", shapeTag(s.Shape), "{shape}", mariaShape(s.Shape, s.Table), "{shapedecl}", mariaShapeDecl,
		).Replace(mariaSegmentTrigger))
		install = strings.NewReplacer("{tag}", lit(shapeTag(s.Shape)),
			"{trigger}", "'"+strings.ReplaceAll(trig, "'", "''")+"'").Replace(mariaShapedDefault)
	}
	rep := r.with(append(pairs, "{install}", install)...)
	return rep.Replace(rep.Replace(tmpl))
}

// dbDefaultError is the error of a database default that cannot be made.
func (d Dialect) dbDefaultError(table, column string, err error) error {
	return fmt.Errorf("dialect: %s: database default for %s.%s: %w", d, table, column, err)
}

// defaultSQL writes a database's side of the database-side defaults in
// its procedural language: PostgreSQL's PL/pgSQL (pgDefaults), MariaDB's
// compound statements (mariaDefaults). A descriptor without one has no
// database-side defaults (ErrNoDBDefault).
type defaultSQL struct {
	// segmentTemplate and snowflakeTemplate are the templates of
	// DBDefault's and SnowflakeDBDefault's statements.
	segmentTemplate, snowflakeTemplate string
	// segment and snowflake finish them with what differs.
	segment   func(s DBDefault, tmpl string, r names, pairs []string) string
	snowflake func(s DBSnowflake, sf snowflakeParts) string
	// slotBits is how many of the sequence bits name a slot (PostgreSQL)
	// or a block (MariaDB) of a snowflake default.
	slotBits int
	// perform: inside a body, a SELECT whose result is dropped is written
	// PERFORM.
	perform bool
	// delimiter ends each statement of a script for the database's own
	// client in place of ';' ("" for ';').
	delimiter string
	// grant is the statement (a format of the sequences, quoted and
	// comma-separated, and the role) that lets a role inserting around
	// idsql draw from a default's sequences with its own privileges.
	grant string
	// definerSpread and definerSnowflake: spread segment defaults and
	// snowflake defaults run in a trigger, with its definer's privileges,
	// so their writers need no grant.
	definerSpread, definerSnowflake bool
}

var pgDefaults = defaultSQL{
	segmentTemplate:   pgDBDefault,
	snowflakeTemplate: pgSnowflakeDefault,
	segment:           pgSegment,
	snowflake:         pgSnowflake,
	slotBits:          pgSlotBits,
	perform:           true,
	// nextval (USAGE), pg_sequence_last_value (SELECT), setval (UPDATE).
	grant: "GRANT USAGE, SELECT, UPDATE ON SEQUENCE %s TO %s",
}

var mariaDefaults = defaultSQL{
	segmentTemplate:   mariaDBDefault,
	snowflakeTemplate: mariaSnowflakeDefault,
	segment:           mariaSegment,
	snowflake:         mariaSnowflake,
	slotBits:          mariaSlotBits,
	delimiter:         "//",
	// DEFAULT NEXT VALUE FOR reads and advances the sequence table.
	grant:            "GRANT SELECT, INSERT ON %s TO %s",
	definerSpread:    true,
	definerSnowflake: true,
}

// DBDefaultGrants returns the statements that let role (as the database
// writes it: app, or 'app'@'%' on MariaDB) key the rows it inserts around
// idsql (psql, COPY, INSERT ... SELECT) by the default s installs: beyond
// INSERT on the table, what the column default draws from with the
// inserting role's privileges. None where a trigger draws with its
// definer's (MariaDB's spread shapes).
func (d Dialect) DBDefaultGrants(s DBDefault, role string) ([]string, error) {
	w, _, err := d.dbTemplate(s.Table, s.Column)
	if err != nil {
		return nil, err
	}
	if w.definerSpread && s.Shape.Spread() {
		return nil, nil
	}
	return []string{fmt.Sprintf(w.grant, d.sequence(s.Table, s.Column, ""), role)}, nil
}

// SnowflakeDBDefaultGrants is DBDefaultGrants for the default
// SnowflakeDBDefault installs: its pointer and slot sequences on
// PostgreSQL; none on MariaDB, whose trigger draws with its definer's
// privileges.
func (d Dialect) SnowflakeDBDefaultGrants(s DBSnowflake, role string) ([]string, error) {
	w, _, err := d.dbTemplate(s.Table, s.Column, s.Namespace)
	if err != nil {
		return nil, err
	}
	if w.definerSnowflake {
		return nil, nil
	}
	seqs := []string{d.sequence(s.Table, s.Column, "")}
	for n := range 1 << w.slotBitsOf(s) {
		seqs = append(seqs, d.sequence(s.Table, s.Column, "_"+strconv.Itoa(n)))
	}
	return []string{fmt.Sprintf(w.grant, strings.Join(seqs, ", "), role)}, nil
}

// sequence is the sequence of table's default on column, with suffix
// ("_3": a snowflake default's slot or digit sequence 3), quoted.
func (d Dialect) sequence(table, column, suffix string) string {
	schema, name := DBDefault{Table: table, Column: column}.Sequence()
	q := d.Quote(name + suffix)
	if schema != "" {
		q = d.Quote(schema) + "." + q
	}
	return q
}

// slotBitsOf is how many of s's sequence bits name a slot (or a block):
// the database's slotBits, leaving at least one bit to count.
func (w *defaultSQL) slotBitsOf(s DBSnowflake) int { return min(w.slotBits, s.SequenceBits-1) }

// names are the replacements every database default's template shares:
// the table, column and sequence, quoted and as string literals.
type names []string

// with returns a replacer for the shared names and more.
func (n names) with(more ...string) *strings.Replacer {
	return strings.NewReplacer(append(append([]string(nil), n...), more...)...)
}

// dbTemplate returns the template of table's default on column for the
// dialect (pg or maria; ErrNoDBDefault for another), and its names,
// quoted, checked with the other names that travel as string literals.
func (d Dialect) dbTemplate(table, column string, others ...string) (*defaultSQL, names, error) {
	w := d.descriptor().defaults
	if w == nil {
		return nil, nil, d.dbDefaultError(table, column, ErrNoDBDefault)
	}
	qt, err := d.QuoteTable(table)
	if err != nil {
		return nil, nil, d.dbDefaultError(table, column, err)
	}
	col, err := d.QuoteIdent(column)
	if err != nil {
		return nil, nil, d.dbDefaultError(table, column, err)
	}
	for _, v := range append([]string{table, column}, others...) {
		// Names travel as string literals inside a dollar-quoted or
		// compound body: refuse what would need escaping beyond ''.
		if strings.ContainsAny(v, `\$;'`) {
			return nil, nil, d.dbDefaultError(table, column, fmt.Errorf("name %q holds \\, $, ; or '", v))
		}
	}
	schema, name := DBDefault{Table: table, Column: column}.Sequence()
	seq := d.sequence(table, column, "")
	schemaLit := "NULL"
	if schema != "" {
		schemaLit = lit(schema)
	}
	parts := nameParts(table)
	return w, names{
		"{table}", qt, "{col}", col, "{seq}", seq,
		"{tablelit}", lit(qt), "{collit}", lit(column), "{seqlit}", lit(seq),
		"{schemalit}", schemaLit, "{seqnamelit}", lit(name), "{tablenamelit}", lit(parts[len(parts)-1]),
		"{tablename}", lit(table), "{instance}", lit(DBInstance),
	}, nil
}

// lit is v as an SQL string literal; dbNames has refused quotes in it.
func lit(v string) string { return "'" + v + "'" }

// ClientScript renders statements from DBDefault as a script for the
// database's own client (psql; mariadb, whose compound statements need
// another delimiter).
func (d Dialect) ClientScript(stmts []string) string {
	var b strings.Builder
	delim := ";"
	if w := d.descriptor().defaults; w != nil && w.delimiter != "" {
		delim = w.delimiter
		b.WriteString("DELIMITER " + delim + "\n")
	}
	for _, s := range stmts {
		b.WriteString(s + delim + "\n")
	}
	if delim != ";" {
		b.WriteString("DELIMITER ;\n")
	}
	return b.String()
}

// pgDBDefault is PostgreSQL's DBDefault statement. The migration lock is
// the segment store's (8315429661) plus one, so two installs serialize.
const pgDBDefault = `DO $idsql$
DECLARE
	blk_last bigint;
	remaining bigint;
BEGIN
	PERFORM pg_advisory_xact_lock(8315429662);
	PERFORM set_config('synchronous_commit', 'on', true);
	CREATE OR REPLACE FUNCTION idsql_next_key(seq regclass, tbl text) RETURNS bigint
	LANGUAGE plpgsql VOLATILE AS $fn$
	BEGIN
		RETURN nextval(seq);
	EXCEPTION WHEN sequence_generator_limit_exceeded THEN
		RAISE EXCEPTION 'idsql: the database''s block of keys for table % is used up (sequence %): %', tbl, seq, {hint}
			USING ERRCODE = 'sequence_generator_limit_exceeded';
	END
	$fn$;
	{shapefn}
	CREATE SEQUENCE IF NOT EXISTS {seq} AS bigint NO CYCLE;
	SELECT s.seqmax - coalesce(pg_sequence_last_value(s.seqrelid), s.seqmin - 1) INTO remaining
	FROM pg_sequence s
	JOIN idsql_alloc_log l ON l.biz_tag = {key} AND l.instance = {instance} AND l.first_id = s.seqmin AND l.last_id = s.seqmax
	WHERE s.seqrelid = to_regclass({seqlit});
	IF remaining IS NULL OR remaining * 10 < {block} THEN
		UPDATE idsql_alloc SET max_id = max_id + {block}, update_time = clock_timestamp()
		WHERE biz_tag = {key} AND max_id <= {maxid} - {block}
		RETURNING max_id INTO blk_last;
		IF blk_last IS NULL THEN
			RAISE EXCEPTION 'idsql: segment key % has no row in idsql_alloc, or no room for a block of % keys below %', {key}, {block}, {maxid}
				USING HINT = 'Run "idsql migrate" first; a table whose keys are used up needs a new key.';
		END IF;
		INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created)
		VALUES ({key}, blk_last - {block} + 1, blk_last, {instance}, clock_timestamp());
		EXECUTE format('ALTER SEQUENCE %s MINVALUE %s MAXVALUE %s START WITH %s RESTART WITH %s NO CYCLE',
			{seqlit}, blk_last - {block} + 1, blk_last, blk_last - {block} + 1, blk_last - {block} + 1);
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = to_regclass({tablelit}) AND a.attname = {collit}
		AND pg_get_expr(d.adbin, d.adrelid) LIKE '%idsql_next_key(%' AND {shapematch}) THEN
		ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT {default};
	END IF;
END
$idsql$`

// mariaDBDefault is MariaDB's DBDefault statement (10.3 and later:
// sequences, DEFAULT NEXT VALUE FOR, EXECUTE IMMEDIATE).
const mariaDBDefault = `BEGIN NOT ATOMIC
	DECLARE blk_last BIGINT DEFAULT NULL;
	DECLARE remaining BIGINT DEFAULT NULL;
	-- An error must not leave the transaction open on a pooled connection.
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	CREATE SEQUENCE IF NOT EXISTS {seq} NOCYCLE;
	SET remaining = (SELECT s.maximum_value - s.next_not_cached_value + 1
		FROM {seq} s
		JOIN idsql_alloc_log l ON l.biz_tag = {key} AND l.instance = {instance}
			AND l.first_id = s.minimum_value AND l.last_id = s.maximum_value);
	IF remaining IS NULL OR remaining * 10 < {block} THEN
		START TRANSACTION;
		UPDATE idsql_alloc SET max_id = max_id + {block}, update_time = UTC_TIMESTAMP(6)
		WHERE biz_tag = {key} AND max_id <= {maxid} - {block};
		IF ROW_COUNT() = 0 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'idsql: the segment key has no row in idsql_alloc, or no room for a block: run "idsql migrate" first';
		END IF;
		SELECT max_id INTO blk_last FROM idsql_alloc WHERE biz_tag = {key};
		INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created)
		VALUES ({key}, blk_last - {block} + 1, blk_last, {instance}, UTC_TIMESTAMP(6));
		COMMIT;
		EXECUTE IMMEDIATE CONCAT('ALTER SEQUENCE {seq} MINVALUE ', blk_last - {block} + 1, ' MAXVALUE ', blk_last,
			' START WITH ', blk_last - {block} + 1, ' RESTART WITH ', blk_last - {block} + 1, ' NOCYCLE');
	END IF;
{install}
END`

// mariaSequenceDefault is how mariaDBDefault serves an ordered table's
// keys: the column default draws from the sequence.
const mariaSequenceDefault = `	IF NOT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = coalesce({schemalit}, DATABASE()) AND table_name = {tablenamelit}
		AND column_name = {collit} AND column_default LIKE CONCAT('%', {seqnamelit}, '%')) THEN
		ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT (NEXT VALUE FOR {seq});
	END IF;`

// mariaShapedDefault is how mariaDBDefault serves a spread table's keys:
// the trigger {trigger} (mariaSegmentTrigger, as a string literal),
// made unless one of the shape {tag} is there; the column's default
// becomes 0, since INSERT ... SELECT checks for a default before the
// trigger runs.
const mariaShapedDefault = `	IF NOT EXISTS (SELECT 1 FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TRIGGER_NAME = {seqnamelit}
		AND LOCATE({tag}, ACTION_STATEMENT) > 0)
	OR NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE({schemalit}, DATABASE()) AND TABLE_NAME = {tablenamelit}
		AND COLUMN_NAME = {collit} AND COLUMN_DEFAULT = '0') THEN
		EXECUTE IMMEDIATE {trigger};
		ALTER TABLE {table} ALTER COLUMN {col} SET DEFAULT 0;
	END IF;`

// mariaSegmentTrigger keys a spread segment table's rows on MariaDB: a
// row without a key (NULL or 0) takes the sequence's next value, shaped.
const mariaSegmentTrigger = `CREATE OR REPLACE TRIGGER {seq} BEFORE INSERT ON {table} FOR EACH ROW
BEGIN
	/* {tagtext}: the install finds the shape here */
{shapedecl}	IF NEW.{col} IS NULL OR NEW.{col} = 0 THEN
		SET k = NEXT VALUE FOR {seq};
{shape}		SET NEW.{col} = k;
	END IF;
END`
