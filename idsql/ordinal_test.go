package idsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// holder.instance: ordinal with the local holder and no workers map: a
// StatefulSet pod's worker ID is its ordinal plus holder.ordinal_offset,
// and an ordinal the layout cannot hold, a host name with no ordinal, or
// one worker ID for several snowflake tables is refused when the keys are
// made.
func TestInstanceOrdinal(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, host, holder, tables string
		worker                     int64
		want                       string // in the error; "" means accepted
	}{
		{"ordinal", "web-3", "{instance: ordinal}", "", 3, ""},
		{"offset", "web-3", "{instance: ordinal, ordinal_offset: 100}", "", 103, ""},
		{"fully qualified", "web-12.web.shop.svc.cluster.local", "{instance: ordinal}", "", 12, ""},
		{"last fitting", "web-1000", "{instance: ordinal, ordinal_offset: 23}", "", 1023, ""},
		{"too big", "web-1000", "{instance: ordinal, ordinal_offset: 24}", "",
			0, "holder.instance: ordinal: pod web-1000 has ordinal 1000, and with holder.ordinal_offset 24 its worker ID 1024 does not fit layout leaf's 10 worker bits (0..1023)"},
		{"no ordinal", "web", "{instance: ordinal}", "", 0, `holder.instance: ordinal: host name "web" does not end in -<ordinal>`},
		{"no ordinal for etcd either", "db-x", "{kind: etcd, endpoints: [a:1], instance: ordinal}", "", 0, `host name "db-x" does not end in -<ordinal>`},
		{"two tables", "web-3", "{instance: ordinal}", "  events: {strategy: snowflake}\n",
			0, "one worker ID (3), but snowflake tables events, orders need one each"},
		{"map wins", "web-3", "{instance: ordinal, workers: {web-3: 7}}", "", 7, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := "namespace: shop\nholder: " + tc.holder + "\ntables:\n  orders: {strategy: snowflake}\n" + tc.tables
			cfg, err := keyset.Parse("idsql.yaml", []byte(y), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Holder.CacheDir = t.TempDir()
			keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Instance: holder.Instance{ID: tc.host, Host: tc.host, PID: 1}})
			if tc.want != "" {
				var fe *keyset.FieldError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("NewKeys = %v, want a *FieldError containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer keys.Close()
			id, err := keys.NextID(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			if w := snowflake.Leaf.Decompose(id).Worker; w != tc.worker {
				t.Errorf("pod %s: worker %d, want %d", tc.host, w, tc.worker)
			}
		})
	}
}

func TestOrdinalOffsetChecked(t *testing.T) {
	for _, tc := range []struct{ holder, want string }{
		{"{ordinal_offset: 5}", "holder.ordinal_offset: is used only with holder.instance: ordinal"},
		{"{instance: ordinal, ordinal_offset: -1}", "holder.ordinal_offset: -1 is negative"},
	} {
		_, err := keyset.Parse("x.yaml", []byte("namespace: n\nholder: "+tc.holder+"\n"), time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("holder %s: %v, want an error containing %q", tc.holder, err, tc.want)
		}
	}
}
