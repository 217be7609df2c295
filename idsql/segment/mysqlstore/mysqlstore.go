package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	_ "github.com/go-sql-driver/mysql" // registers the "mysql" driver

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
)

// SQL returns the segment.StoreSQL for MySQL and MariaDB.
func SQL() segment.StoreSQL {
	return segment.StoreSQL{
		Dialect: dialect.MySQL,
		AllocSchema: `CREATE TABLE IF NOT EXISTS idsql_alloc (
	biz_tag     VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	max_id      BIGINT NOT NULL DEFAULT 0,
	step        BIGINT NOT NULL,
	description VARCHAR(256) NOT NULL DEFAULT '',
	update_time DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
	PRIMARY KEY (biz_tag),
	CHECK (max_id >= 0),
	CHECK (step > 0)
) ENGINE=InnoDB`,
		LogSchema: []string{`CREATE TABLE IF NOT EXISTS idsql_alloc_log (
	id       BIGINT NOT NULL AUTO_INCREMENT,
	biz_tag  VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	first_id BIGINT NOT NULL,
	last_id  BIGINT NOT NULL,
	instance VARCHAR(255) NOT NULL,
	created  DATETIME(6) NOT NULL,
	PRIMARY KEY (id),
	INDEX idsql_alloc_log_first (first_id),
	INDEX idsql_alloc_log_key (biz_tag, first_id),
	CHECK (first_id <= last_id)
) ENGINE=InnoDB`},
		// CREATE TABLE and CREATE PROCEDURE ... IF NOT EXISTS are safe
		// against a concurrent twin (the metadata lock serializes them), and
		// DDL commits by itself anyway: the dialect has no migration lock.
		// Nor has it a durable-commit statement: InnoDB has nothing a
		// transaction or a session can set to make its own commit durable.
		// innodb_flush_log_at_trx_commit and sync_binlog are global;
		// CheckDurable reports them.
		Allocate:        allocateCall,
		AllocateSetup:   allocateProcedure,
		PrepareAllocate: true,
	}
}

// New returns a store on db, a MySQL or MariaDB database opened with the
// "mysql" driver, using idsql's own tables. Run its Migrate before the
// first allocation: the allocation calls the stored procedure Migrate
// creates.
func New(db *sql.DB) *segment.SQLStore { return segment.NewSQLStore(db, SQL()) }

// NewWith is New configured by st; set st.LeafTable to allocate from
// Meituan Leaf's table.
func NewWith(db *sql.DB, st segment.StoreSettings) (*segment.SQLStore, error) {
	return segment.NewSQLStoreWith(db, SQL(), st)
}

// routineName is the stored procedure allocating from t. The version in
// the name lets a later release change the procedure without dropping the
// one older processes still call.
func routineName(t segment.Table) string {
	const base = "idsql_allocate_v1"
	if !t.Leaf {
		return base
	}
	var b strings.Builder
	for _, r := range t.Name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := base + "_" + b.String()
	if b.String() != t.Name || len(name) > 64 {
		// Two names that read alike ("a.b", "a_b") or a long one: keep
		// them apart with a hash of the exact name.
		h := fnv.New32a()
		h.Write([]byte(t.Name))
		suffix := fmt.Sprintf("_%08x", h.Sum32())
		name = name[:min(len(name), 64-len(suffix))] + suffix
	}
	return name
}

func allocateCall(t segment.Table) string {
	return "CALL `" + routineName(t) + "`(?, ?, ?, ?, ?)"
}

// allocateProcedure returns the CREATE PROCEDURE of t's allocation. Its
// key parameter takes the character set and collation of t's biz_tag
// column: a parameter of another collation would make the UPDATE compare
// through a conversion, scan the table and lock every row.
func allocateProcedure(ctx context.Context, tx *sql.Tx, t segment.Table) ([]string, error) {
	coll, err := keyCollation(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	keyType := "VARCHAR(255)"
	if coll != "" {
		// Every collation's name starts with its character set's.
		cs, _, _ := strings.Cut(coll, "_")
		if !isName(cs) || !isName(coll) {
			return nil, fmt.Errorf("%s.biz_tag: unexpected collation %q", t.Name, coll)
		}
		keyType += " CHARACTER SET " + cs + " COLLATE " + coll
	}
	touch := ", update_time = p_now"
	if t.Leaf {
		touch = "" // as Leaf: its column updates itself
	}
	off := t.LastOffset()
	return []string{fmt.Sprintf("CREATE PROCEDURE IF NOT EXISTS `%[1]s` (\n"+
		`	IN p_step BIGINT, IN p_now DATETIME(6), IN p_key %[2]s,
	IN p_limit BIGINT, IN p_instance VARCHAR(255) CHARACTER SET utf8mb4)
	MODIFIES SQL DATA
	SQL SECURITY INVOKER
	COMMENT 'idsql segment store: allocate the next range of key p_key and log it in idsql_alloc_log'
BEGIN
	DECLARE v_max, v_step BIGINT;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;
	START TRANSACTION;
	UPDATE %[3]s
	SET max_id = max_id + IF(p_step > 0, p_step, step)%[4]s
	WHERE biz_tag = p_key AND max_id <= p_limit - IF(p_step > 0, p_step, step);
	IF ROW_COUNT() > 0 THEN
		-- The UPDATE holds the row's lock: this reads what it wrote.
		SELECT max_id, step INTO v_max, v_step FROM %[3]s WHERE biz_tag = p_key;
		INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created)
		VALUES (p_key, v_max - IF(p_step > 0, p_step, v_step) + 1 - %[5]d, v_max - %[5]d, p_instance, p_now);
	END IF;
	COMMIT;
	SELECT v_max AS max_id, v_step AS step FROM DUAL WHERE v_max IS NOT NULL;
END`, routineName(t), keyType, t.Quoted, touch, off)}, nil
}

// keyCollation returns the collation of t's biz_tag column, "" for a
// column that is not a string. It asks SHOW COLUMNS, which opens t alone:
// a query on information_schema.COLUMNS may scan every table of the server
// and fail on one that another session is altering.
func keyCollation(ctx context.Context, tx *sql.Tx, t segment.Table) (string, error) {
	rows, err := tx.QueryContext(ctx, "SHOW FULL COLUMNS FROM "+t.Quoted+" LIKE 'biz_tag'")
	if err != nil {
		return "", fmt.Errorf("read the type of %s.biz_tag: %w", t.Name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("read the type of %s.biz_tag: %w", t.Name, err)
		}
		return "", fmt.Errorf("table %s has no biz_tag column", t.Name)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", fmt.Errorf("read the type of %s.biz_tag: %w", t.Name, err)
	}
	for i, c := range cols {
		if strings.EqualFold(c, "Collation") {
			return vals[i].String, nil
		}
	}
	return "", fmt.Errorf("read the type of %s.biz_tag: SHOW COLUMNS has no Collation", t.Name)
}

// isName reports whether s is a plain character set or collation name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// ErrNotDurable is wrapped by CheckDurable's error.
var ErrNotDurable = errors.New("mysqlstore: the server does not commit durably")

// CheckDurable reports whether the server behind db makes a commit durable
// before acknowledging it, which the segment store needs so that a crash
// cannot hand a range out twice: innodb_flush_log_at_trx_commit must be 1
// (or 3 on MariaDB), and when the binary log is on, sync_binlog must be 1.
// These are global settings no transaction can override (see the package
// documentation). A server that does not commit durably yields an error
// wrapping ErrNotDurable that names the setting and its value.
func CheckDurable(ctx context.Context, db *sql.DB) error {
	lazy, err := dialect.MySQL.LazyCommits(ctx, db)
	switch {
	case err != nil:
		return fmt.Errorf("mysqlstore: check durability: %w", err)
	case lazy != nil:
		return fmt.Errorf("%w: the server runs with %s, so a crash may lose the last allocations and hand their ranges out again; "+
			"set innodb_flush_log_at_trx_commit = 1 (and sync_binlog = 1 with binary logging)", ErrNotDurable, strings.Join(lazy, " and "))
	}
	return nil
}
