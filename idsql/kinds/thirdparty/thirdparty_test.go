// Package thirdparty_test is a holder kind of another module, as far as
// idsql can tell: it registers itself, with a configuration key of its
// own, and nothing in package idsql or package holderkind names it. It is a
// test package of its own so that its kind does not show up in the other
// tests' lists of kinds.
package thirdparty_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/idsql/keyset"
)

// poolURLs records the pool_url each test-pool holder was made with.
var poolURLs struct {
	sync.Mutex
	got []any
}

// init registers a holder kind of this test package, with a configuration
// key of its own, as a kind of another module would: nothing in package
// idsql names it.
func init() {
	holderkind.Register("test-pool", holderkind.Kind{
		Modes: []string{"sticky"},
		Keys:  []string{"pool_url"},
		Check: func(s holderkind.Settings) error {
			if u, _ := s.Options["pool_url"].(string); !strings.HasPrefix(u, "http://") {
				return holderkind.KeyErrorf("pool_url", "the test-pool holder needs an http:// pool_url, not %v", s.Options["pool_url"])
			}
			return nil
		},
		New: func(s holderkind.Settings) (holder.Holder, error) {
			poolURLs.Lock()
			poolURLs.got = append(poolURLs.got, s.Options["pool_url"])
			poolURLs.Unlock()
			return holder.Fixed(5), nil
		},
	})
}

// TestHolderKindOfItsOwn loads a configuration of a holder kind registered
// by this test package, with its own key, issues a key under the worker ID
// its holder grants, and sees the configuration checks ask the kind.
func TestHolderKindOfItsOwn(t *testing.T) {
	const tables = "tables: {orders: {strategy: snowflake}}\n"
	cfg, err := keyset.Parse("x.yaml", []byte("namespace: n\nholder:\n  kind: test-pool\n  pool_url: http://pool:1\n"+tables), time.Now())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := cfg.Holder.Options["pool_url"]; got != "http://pool:1" {
		t.Fatalf("holder.Options[pool_url] = %v", got)
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{})
	if err != nil {
		t.Fatalf("NewKeys: %v", err)
	}
	defer keys.Close()
	id, err := keys.NextID(context.Background(), "orders")
	if err != nil {
		t.Fatalf("NextID: %v", err)
	}
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		t.Fatal(err)
	}
	if w := layout.Decompose(id).Worker; w != 5 {
		t.Errorf("key %d has worker %d, want the test-pool holder's 5", id, w)
	}
	poolURLs.Lock()
	got := append([]any(nil), poolURLs.got...)
	poolURLs.Unlock()
	if len(got) != 1 || got[0] != "http://pool:1" {
		t.Errorf("the holder was made with pool_url %v, want [http://pool:1]", got)
	}

	for _, c := range []struct{ holder, want string }{
		// The kind's own check, at the key's line.
		{"  kind: test-pool\n  pool_url: ftp://pool\n", `x.yaml:4: holder.pool_url: the test-pool holder needs an http:// pool_url, not ftp://pool`},
		// Another kind does not take the key, and says which kind does.
		{"  kind: local\n  pool_url: http://pool:1\n", `x.yaml:4: holder.pool_url: only the test-pool holder uses pool_url`},
		// A misspelt key is unknown, with the kind's keys among those
		// suggested.
		{"  kind: test-pool\n  pool_ur: http://pool:1\n", `x.yaml:4: holder.pool_ur: unknown key "pool_ur"; did you mean "pool_url"?`},
		// The kind's modes are checked as idsql's own kinds' are.
		{"  kind: test-pool\n  mode: lease\n  pool_url: http://pool:1\n", `holder.mode: "lease" is not a mode of the test-pool holder (want sticky)`},
	} {
		_, err := keyset.Parse("x.yaml", []byte("namespace: n\nholder:\n"+c.holder+tables), time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("holder:\n%s: %v, want an error containing %s", c.holder, err, c.want)
		}
	}
}
