package kinds_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/kinds"
)

// This test binary links idsql and none of the optional kinds: idsql links
// the local holder, and PostgreSQL's segment store is built in.
func TestLinkedKinds(t *testing.T) {
	if _, err := holderkind.Lookup("local"); err != nil {
		t.Errorf("local holder: %v", err)
	}
	if _, err := kinds.LookupStore("postgres"); err != nil {
		t.Errorf("postgres store: %v", err)
	}
	for _, tc := range []struct {
		what   string
		lookup func() error
		want   string
	}{
		{"zookeeper holder", func() error { _, err := holderkind.Lookup("zookeeper"); return err },
			`holder "zookeeper" is not linked in: add import _ "github.com/idsql/idsql/holder/zookeeper"`},
		{"postgres holder", func() error { _, err := holderkind.Lookup("postgres"); return err },
			`add import _ "github.com/idsql/idsql/holder/workertable"`},
		{"mysql holder", func() error { _, err := holderkind.Lookup("mysql"); return err },
			`holder "mysql" is not linked in: add import _ "github.com/idsql/idsql/holder/workertable"`},
		{"mysql store", func() error { _, err := kinds.LookupStore("mysql"); return err },
			`segment store "mysql" is not linked in: add import _ "github.com/idsql/idsql/idsql/segment/mysqlstore"`},
		{"sqlite store", func() error { _, err := kinds.LookupStore("sqlite"); return err },
			`add import _ "github.com/idsql/idsql/idsql/segment/sqlitestore"`},
		{"redis buffer", func() error { _, err := kinds.LookupBuffer("redis"); return err },
			`buffer "redis" is not linked in: add import _ "github.com/idsql/idsql/idsql/segment/redisqueue"`},
		{"etcd holder", func() error { _, err := holderkind.Lookup("etcd"); return err },
			`holder "etcd" is not linked in: add import _ "github.com/idsql/idsql/holder/etcd"`},
		{"unknown holder", func() error { _, err := holderkind.Lookup("consul"); return err },
			`unknown holder "consul" (want etcd, local, mysql, postgres or zookeeper)`},
	} {
		if err := tc.lookup(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %s", tc.what, err, tc.want)
		}
	}
}

// A configuration that names a kind the program does not link fails when
// it is loaded, with the import to add.
func TestConfigNamesTheImport(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"namespace: a\nholder: {kind: zookeeper, servers: [127.0.0.1:2181]}\n",
			`holder.kind: holder "zookeeper" is not linked in: add import _ "github.com/idsql/idsql/holder/zookeeper"`},
		{"namespace: a\nholder: {kind: etcd, endpoints: [127.0.0.1:2379]}\n",
			`holder.kind: holder "etcd" is not linked in: add import _ "github.com/idsql/idsql/holder/etcd"`},
		{"namespace: a\nholder: {kind: postgres}\n",
			`add import _ "github.com/idsql/idsql/holder/workertable"`},
		{"namespace: a\nholder: {kind: mysql}\n",
			`add import _ "github.com/idsql/idsql/holder/workertable"`},
		{"namespace: a\nredis: {addr: 127.0.0.1:6379}\ntables: {t: {strategy: segment, buffer: redis}}\n",
			`tables.t.buffer: buffer "redis" is not linked in: add import _ "github.com/idsql/idsql/idsql/segment/redisqueue"`},
	} {
		_, err := keyset.Parse("idsql.yaml", []byte(tc.yaml), time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %s", tc.yaml, err, tc.want)
		}
	}
}

// Registering a name twice panics, as sql.Register does.
func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("second RegisterStore of postgres did not panic")
		}
	}()
	kinds.RegisterStore("postgres", nil)
}
