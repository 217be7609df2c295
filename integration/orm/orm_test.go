package orm

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// The models the ORMs' own documentation recommends.

// GormOrder is gorm's default model: an integer ID is the primary key, and
// gorm leaves it to the database (it reads it back with RETURNING on
// PostgreSQL and MariaDB, LastInsertId on MySQL).
type GormOrder struct {
	ID     uint64
	UserID int
	Note   string
}

// GormItem is gorm's model for a key the database does not generate: gorm
// sends ID = 0 for a new row.
type GormItem struct {
	ID   uint64 `gorm:"primaryKey;autoIncrement:false"`
	Name string
}

// BunOrder is bun's model for a generated key: bun sends DEFAULT and reads
// the key back with RETURNING.
type BunOrder struct {
	bun.BaseModel `bun:"table:bun_orders"`
	ID            int64 `bun:",pk,autoincrement"`
	Note          string
}

// BunItem is bun's primary key without autoincrement: bun sends 0.
type BunItem struct {
	bun.BaseModel `bun:"table:bun_items"`
	ID            int64 `bun:",pk"`
	Name          string
}

// GormAccount is gorm's model for a UUID key: with a default, gorm leaves
// a zero ID out of the INSERT and reads the key back with RETURNING, so
// idsql fills it (a uuid7 table) and the struct gets it.
type GormAccount struct {
	ID   uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	Name string
}

// BunAccount is bun's model for a UUID key with a default: bun sends
// DEFAULT for a zero ID, and reads it back with RETURNING on PostgreSQL.
type BunAccount struct {
	bun.BaseModel `bun:"table:bun_accounts"`
	ID            uuid.UUID `bun:",pk,type:uuid,default:gen_random_uuid()"`
	Name          string
}

var tables = []string{"gorm_orders", "gorm_items", "bun_orders", "bun_items"}

// uuidTables are the models' tables keyed by UUIDs (uuid7).
var uuidTables = []string{"gorm_accounts", "bun_accounts"}

func config() *keyset.Config {
	cfg := &keyset.Config{Namespace: "orm", Tables: map[string]keyset.TableConfig{}}
	for _, t := range tables {
		cfg.Tables[t] = keyset.TableConfig{Strategy: keyset.Snowflake}
	}
	for _, t := range uuidTables {
		cfg.Tables[t] = keyset.TableConfig{Strategy: keyset.UUID7}
	}
	return cfg
}

// workers gives each table a worker ID of its own.
func workers() holder.Holder {
	m := map[string]int64{}
	for i, t := range append(slices.Clone(tables), uuidTables...) {
		m[t] = int64(i + 1)
	}
	return holder.Static(m)
}

const pgSchema = `
CREATE TABLE gorm_orders (id bigint PRIMARY KEY, user_id bigint, note text);
CREATE TABLE gorm_items (id bigint PRIMARY KEY, name text);
CREATE TABLE bun_orders (id bigint PRIMARY KEY, note text);
CREATE TABLE bun_items (id bigint PRIMARY KEY, name text);
CREATE TABLE gorm_accounts (id uuid PRIMARY KEY, name text);
CREATE TABLE bun_accounts (id uuid PRIMARY KEY, name text);
`

var mysqlSchema = []string{
	"CREATE TABLE gorm_orders (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, user_id BIGINT, note TEXT)",
	"CREATE TABLE gorm_items (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, name TEXT)",
	"CREATE TABLE bun_orders (id BIGINT NOT NULL PRIMARY KEY, note TEXT)",
	"CREATE TABLE bun_items (id BIGINT NOT NULL PRIMARY KEY, name TEXT)",
	"CREATE TABLE gorm_accounts (id UUID NOT NULL PRIMARY KEY, name TEXT)",
	"CREATE TABLE bun_accounts (id UUID NOT NULL PRIMARY KEY, name TEXT)",
}

// openPG returns a wrapped *sql.DB on a fresh PostgreSQL schema and a raw
// one.
func openPG(t *testing.T) (wrapped, raw *sql.DB) {
	t.Helper()
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, pgSchema); err != nil {
		t.Fatal(err)
	}
	cfg := config()
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	inner, err := pq.NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := idsql.NewConnector(inner, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: workers()}})
	if err != nil {
		t.Fatal(err)
	}
	wrapped = sql.OpenDB(c)
	t.Cleanup(func() { wrapped.Close() })
	return wrapped, raw
}

// openMySQL is openPG on MariaDB (or MySQL).
func openMySQL(t *testing.T) (wrapped, raw *sql.DB) {
	t.Helper()
	dsn := mysqltest.Database(t)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	ctx := context.Background()
	for _, q := range mysqlSchema {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config()
	// The test server does not flush every commit: the registry must be
	// told so.
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true, Dialect: "mysql"})
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: reg, Segments: mysqlstore.New(raw)}); err != nil {
		t.Fatal(err)
	}
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := idsql.NewConnector(inner, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: workers(), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	wrapped = sql.OpenDB(c)
	t.Cleanup(func() { wrapped.Close() })
	return wrapped, raw
}

// rowKeys returns a table's keys in key order.
func rowKeys(t *testing.T, raw *sql.DB, table string) []int64 {
	t.Helper()
	rows, err := raw.Query("SELECT id FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// checkKeys checks that table holds exactly n rows whose keys are idsql's
// (positive, distinct, from the table's worker), and that the structs'
// keys, when given, are exactly those.
func checkKeys(t *testing.T, raw *sql.DB, table string, n int, structKeys []int64) {
	t.Helper()
	keys := rowKeys(t, raw, table)
	if len(keys) != n {
		t.Fatalf("%s: %d rows, want %d", table, len(keys), n)
	}
	cfg := config()
	layout, _ := cfg.SnowflakeLayout()
	want := int64(slices.Index(tables, table) + 1)
	for _, k := range keys {
		if p, err := layout.Decode(k, time.Now(), time.Second); err != nil || p.Worker != want || time.Since(p.Time) > time.Minute {
			t.Errorf("%s: key %d decodes to %+v, %v; not a key of this table's worker %d issued now", table, k, p, err, want)
		}
	}
	if structKeys == nil {
		return
	}
	got := slices.Clone(structKeys)
	slices.Sort(got)
	if !slices.Equal(got, keys) {
		t.Errorf("%s: structs hold keys %v, rows %v", table, structKeys, keys)
	}
}

// checkUUIDs checks that table holds exactly n rows whose keys are UUIDv7s
// idsql issued (read back as keys of the layout), and that the structs'
// keys, when given, are exactly those.
func checkUUIDs(t *testing.T, raw *sql.DB, table string, n int, structKeys []uuid.UUID) {
	t.Helper()
	rows, err := raw.Query("SELECT id FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cfg := config()
	codec, err := cfg.UUIDKeys(table)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codec.Key(u); err != nil || u.Version() != 7 {
			t.Errorf("%s: key %s (version %d) is not idsql's: %v", table, u, u.Version(), err)
		}
		keys = append(keys, u.String())
	}
	if len(keys) != n {
		t.Fatalf("%s: %d rows, want %d", table, len(keys), n)
	}
	if structKeys == nil {
		return
	}
	var got []string
	for _, k := range structKeys {
		got = append(got, k.String())
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Errorf("%s: structs hold keys %v, rows %v", table, got, keys)
	}
}

func openGorm(t *testing.T, dialector gorm.Dialector) *gorm.DB {
	t.Helper()
	g, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runGorm creates single rows and batches of both gorm models.
func runGorm(t *testing.T, g *gorm.DB, raw *sql.DB) {
	t.Helper()
	var orderKeys []int64
	for i := range 2 {
		o := GormOrder{UserID: i, Note: "single"}
		if err := g.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		orderKeys = append(orderKeys, int64(o.ID))
	}
	batch := []GormOrder{{UserID: 10, Note: "a"}, {UserID: 11, Note: "b"}, {UserID: 12, Note: "c"}}
	if err := g.Create(&batch).Error; err != nil {
		t.Fatal(err)
	}
	ptrs := []*GormOrder{{UserID: 20}, {UserID: 21}}
	if err := g.CreateInBatches(ptrs, 1).Error; err != nil {
		t.Fatal(err)
	}
	for _, o := range batch {
		orderKeys = append(orderKeys, int64(o.ID))
	}
	for _, o := range ptrs {
		orderKeys = append(orderKeys, int64(o.ID))
	}
	checkKeys(t, raw, "gorm_orders", 7, orderKeys)

	// autoIncrement:false: gorm sends ID = 0 and does not ask for the key
	// back, so the rows get idsql's keys (the second row used to be a
	// duplicate of the first) and the structs keep 0.
	for range 2 {
		it := GormItem{Name: "single"}
		if err := g.Create(&it).Error; err != nil {
			t.Fatal(err)
		}
		if it.ID != 0 {
			t.Errorf("gorm wrote key %d back for an autoIncrement:false model: update the README", it.ID)
		}
	}
	items := []GormItem{{Name: "a"}, {Name: "b"}, {ID: 77, Name: "own key"}}
	if err := g.Create(&items).Error; err != nil {
		t.Fatal(err)
	}
	keys := rowKeys(t, raw, "gorm_items")
	if len(keys) != 5 || keys[0] != 77 {
		t.Fatalf("gorm_items keys %v, want the caller's 77 and four of idsql's", keys)
	}
	if _, err := raw.Exec("DELETE FROM gorm_items WHERE id = 77"); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, raw, "gorm_items", 4, nil)

	a := GormAccount{Name: "single"}
	if err := g.Create(&a).Error; err != nil {
		t.Fatal(err)
	}
	accounts := []GormAccount{{Name: "a"}, {Name: "b"}}
	if err := g.Create(&accounts).Error; err != nil {
		t.Fatal(err)
	}
	checkUUIDs(t, raw, "gorm_accounts", 3, []uuid.UUID{a.ID, accounts[0].ID, accounts[1].ID})
}

func TestGormPostgres(t *testing.T) {
	db, raw := openPG(t)
	runGorm(t, openGorm(t, postgres.New(postgres.Config{Conn: db})), raw)
}

func TestGormMariaDB(t *testing.T) {
	db, raw := openMySQL(t)
	runGorm(t, openGorm(t, gormmysql.New(gormmysql.Config{Conn: db})), raw)
}

// runBun inserts single rows and batches of both bun models.
func runBun(t *testing.T, b *bun.DB, raw *sql.DB) {
	t.Helper()
	ctx := context.Background()
	var keys []int64
	for range 2 {
		o := BunOrder{Note: "single"}
		if _, err := b.NewInsert().Model(&o).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.ID)
	}
	batch := []BunOrder{{Note: "a"}, {Note: "b"}, {Note: "c"}}
	if _, err := b.NewInsert().Model(&batch).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, o := range batch {
		keys = append(keys, o.ID)
	}
	checkKeys(t, raw, "bun_orders", 5, keys)

	// pk alone: bun sends 0 and reads nothing back.
	for range 2 {
		it := BunItem{Name: "single"}
		if _, err := b.NewInsert().Model(&it).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	items := []BunItem{{Name: "a"}, {Name: "b"}}
	if _, err := b.NewInsert().Model(&items).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, raw, "bun_items", 4, nil)

	// A UUID key with a default: bun sends DEFAULT, and reads the key
	// back with RETURNING where the dialect has it (PostgreSQL).
	a := BunAccount{Name: "single"}
	if _, err := b.NewInsert().Model(&a).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	accounts := []BunAccount{{Name: "a"}, {Name: "b"}}
	if _, err := b.NewInsert().Model(&accounts).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var structKeys []uuid.UUID
	if b.Dialect().Name() == dialect.PG {
		structKeys = []uuid.UUID{a.ID, accounts[0].ID, accounts[1].ID}
	}
	checkUUIDs(t, raw, "bun_accounts", 3, structKeys)
}

func TestBunPostgres(t *testing.T) {
	db, raw := openPG(t)
	runBun(t, bun.NewDB(db, pgdialect.New()), raw)
}

func TestBunMariaDB(t *testing.T) {
	db, raw := openMySQL(t)
	runBun(t, bun.NewDB(db, mysqldialect.New()), raw)
}
