package mysqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
)

// TestMySQLCheckDurable: CheckDurable agrees with the server's settings.
// scripts/servers runs MariaDB with innodb_flush_log_at_trx_commit = 2 (no
// fsync per commit, for speed), so there it must report the setting.
func TestMySQLCheckDurable(t *testing.T) {
	t.Parallel()
	db, _ := mysqltest.Open(t)
	ctx := context.Background()
	var flush, syncBinlog int64
	var logBin string
	if err := db.QueryRow(`SELECT @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog`).Scan(&flush, &logBin, &syncBinlog); err != nil {
		t.Fatal(err)
	}
	binlogOn := logBin == "1" || strings.EqualFold(logBin, "ON")
	err := mysqlstore.CheckDurable(ctx, db)
	t.Logf("innodb_flush_log_at_trx_commit=%d log_bin=%s sync_binlog=%d: %v", flush, logBin, syncBinlog, err)
	switch {
	case flush != 1 && flush != 3:
		if !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "innodb_flush_log_at_trx_commit") {
			t.Fatalf("CheckDurable = %v, want ErrNotDurable naming innodb_flush_log_at_trx_commit", err)
		}
	case binlogOn && syncBinlog != 1:
		if !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "sync_binlog") {
			t.Fatalf("CheckDurable = %v, want ErrNotDurable naming sync_binlog", err)
		}
	case err != nil:
		t.Fatalf("CheckDurable = %v on a durable server", err)
	}
}

// TestMySQLLeafTableInAnotherDatabase: the Leaf table may live in another
// database than idsql_alloc_log ("leafdb.leaf_alloc"); Migrate reads its
// key column there and the procedure allocates from it.
func TestMySQLLeafTableInAnotherDatabase(t *testing.T) {
	t.Parallel()
	leafDSN := mysqltest.Database(t)
	cfg, err := mysql.ParseDSN(leafDSN)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := mysqltest.Open(t)
	ctx := context.Background()
	table := "`" + cfg.DBName + "`.leaf_alloc"
	for _, q := range []string{
		`CREATE TABLE ` + table + ` (
	biz_tag     VARCHAR(128) CHARACTER SET latin1 NOT NULL DEFAULT '',
	max_id      BIGINT NOT NULL DEFAULT 1,
	step        INT NOT NULL,
	description VARCHAR(256) DEFAULT NULL,
	update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
	PRIMARY KEY (biz_tag)
) ENGINE=InnoDB`,
		`INSERT INTO ` + table + ` (biz_tag, max_id, step) VALUES ('orders', 1001, 50)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := mysqlstore.NewWith(db, segment.StoreSettings{LeafTable: cfg.DBName + ".leaf_alloc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := s.Allocate(ctx, segment.Request{Key: "orders", Instance: "test"})
	if err != nil || r.First != 1001 || r.Last != 1050 || r.StoredStep != 50 {
		t.Fatalf("Allocate: %+v, %v", r, err)
	}
	ranges, err := s.Ranges(ctx, "orders")
	if err != nil || len(ranges) != 1 || ranges[0].First != 1001 || ranges[0].Last != 1050 {
		t.Fatalf("logged ranges %+v, %v", ranges, err)
	}
}

// TestRoutineNames: each allocation table has a procedure of its own,
// named after it, within MySQL's 64 characters.
func TestRoutineNames(t *testing.T) {
	d := mysqlstore.SQL()
	for _, tc := range []struct {
		table segment.Table
		want  string
	}{
		{segment.Table{Name: "idsql_alloc"}, "CALL `idsql_allocate_v1`(?, ?, ?, ?, ?)"},
		{segment.Table{Name: "leaf_alloc", Leaf: true}, "CALL `idsql_allocate_v1_leaf_alloc`(?, ?, ?, ?, ?)"},
		{segment.Table{Name: "leafdb.leaf_alloc", Leaf: true}, "CALL `idsql_allocate_v1_leafdb_leaf_alloc_"},
		{segment.Table{Name: "leafdb_leaf_alloc", Leaf: true}, "CALL `idsql_allocate_v1_leafdb_leaf_alloc`("},
		{segment.Table{Name: strings.Repeat("x", 64), Leaf: true}, "CALL `idsql_allocate_v1_xxxx"},
	} {
		got := d.Allocate(tc.table)
		name, _, _ := strings.Cut(strings.TrimPrefix(got, "CALL `"), "`")
		if !strings.HasPrefix(got, tc.want) || len(name) > 64 {
			t.Errorf("%q: %s (name of %d characters), want %s...", tc.table.Name, got, len(name), tc.want)
		}
	}
	a := d.Allocate(segment.Table{Name: "a.b", Leaf: true})
	b := d.Allocate(segment.Table{Name: "a_b", Leaf: true})
	if a == b {
		t.Errorf("tables a.b and a_b share the procedure %s", a)
	}
}
