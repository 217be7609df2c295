// Package server is idsql's HTTP ID server: Meituan Leaf's HTTP API over
// idsql's generators, so Leaf clients can switch without changes, plus batch
// endpoints, a monitor page, Prometheus metrics and token auth.
//
// # Endpoints
//
//	GET /api/segment/get/{key}          one ID of segment key {key}, decimal text
//	GET /api/segment/get/{key}/{n}      n IDs, one per line (n <= Settings.MaxBatch)
//	GET /api/snowflake/get/{key}        one snowflake ID of configured table {key}
//	GET /api/snowflake/get/{key}/{n}    n snowflake IDs, one per line
//	GET /decodeSnowflakeId?snowflakeId=N  JSON {"timestamp","workerId","sequenceId"} as Leaf answers
//	GET /                               the monitor page (also /monitor, /cache, /db)
//	GET /metrics                        Prometheus text format
//	GET /healthz                        "ok" (never needs a token)
//
// A segment key is a row of idsql_alloc (Leaf's biz_tag); a snowflake key is
// the name of a snowflake table in the configuration, whose generator (and
// worker lease) the endpoint uses. Keys are 1 to 128 characters from
// [A-Za-z0-9_.:-] and reach the database only as bind parameters.
//
// With Settings.Tokens set, every endpoint but /healthz needs
// "Authorization: Bearer TOKEN". No other place is read: a token in the
// query string would end up in access logs and browser histories.
//
// Success is 200 with text/plain IDs. Every failure is a non-200 status
// with a one-line text body naming the problem:
//
//	400 invalid key / invalid count     404 unknown key or path
//	401 missing or wrong token          405 method not allowed
//	503 segments not ready, clock moved backwards, lease lost, shutting down
//	500 ID space exhausted, store errors
//
// # Example
//
//	srv, err := server.New(server.Settings{Keys: keys, Segments: gen})
//	if err != nil { ... }
//	ln, _ := net.Listen("tcp", "127.0.0.1:8080")
//	err = srv.Serve(ctx, ln) // until ctx ends, then drains and releases leases
package server
