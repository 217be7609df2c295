package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/server"
)

// TestShapedKeys: the ID endpoints issue keys of a table's spread shape
// (through Keys), and /decodeSnowflakeId undoes the shape of the table it
// is told, refusing a bare decimal ID that the shapes read differently.
func TestShapedKeys(t *testing.T) {
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake, shape: {spread: reverse}}
  tickets: {strategy: segment, step: 10, shape: {spread: reverse}}
`)
	ids := parseIDs(t, mustGet(t, srv, "/api/segment/get/tickets/5"))
	for _, id := range ids {
		// Numbers 1..5 reversed in 63 bits lie at 2^60 and above.
		if id < 1<<60 {
			t.Fatalf("segment key %d is not shaped (keys %v)", id, ids)
		}
	}
	sf := parseIDs(t, mustGet(t, srv, "/api/snowflake/get/x"))[0]
	var d server.Decoded
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/decodeSnowflakeId?table=leaf_snowflake&snowflakeId="+strconv.FormatInt(sf, 10))), &d); err != nil ||
		d.ID != strconv.FormatInt(sf, 10) || d.Shape != "{spread: reverse}" || d.Key == "" || d.WorkerID != "1" {
		t.Fatalf("decode %d: %+v %v", sf, d, err)
	}
	if tm, err := time.Parse(time.RFC3339Nano, d.Time); err != nil || time.Since(tm) > time.Minute {
		t.Errorf("decoded time %q, %v: want now", d.Time, err)
	}
	code, _, hdr := get(t, srv, "GET", "/decodeSnowflakeId?snowflakeId="+strconv.FormatInt(sf, 10))
	if code != http.StatusBadRequest || !strings.Contains(hdr.Get("X-Idsql-Error"), "add &table=T") {
		t.Errorf("decode without table: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
}
