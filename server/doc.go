// Package server is idsql's HTTP ID server: Meituan Leaf's HTTP API over
// idsql's generators, so a Leaf client switches by changing the host, plus
// batch endpoints, a monitor page, Prometheus metrics and token auth.
//
// # Endpoints
//
//	GET /api/segment/get/{key}          one ID of segment key {key}, decimal text
//	GET /api/segment/get/{key}/{n}      n IDs, one per line (n <= Settings.MaxBatch)
//	GET /api/segment/get/{key}[/{n}]?shard=N  keys of shard N of a sharded table (required there)
//	GET /api/snowflake/get/{key}        one snowflake ID, for any key
//	GET /api/snowflake/get/{key}/{n}    n snowflake IDs, one per line
//	GET /api/uuid7/get/{table}          one key of uuid7 table {table}, a canonical UUIDv7 (idsql's own route)
//	GET /api/uuid7/get/{table}/{n}      n of them, one per line; a name that is no uuid7 table is 404
//	GET /decodeSnowflakeId?snowflakeId=N  JSON {"timestamp","workerId","sequenceId"} as Leaf answers, then "time","layout","id"
//	GET /decodeSnowflakeId?snowflakeId=N&table=T  the same for a key of snowflake table T, undoing its shape (needed when
//	                                    a snowflake table has a spread shape); then also "key" (before the shape) and "shape"
//	GET /decodeId?table=T&id=N            JSON {"id","table","index","shard","app"}: a key of a segment table with shard or app bits
//	GET /                               the monitor page (also /monitor, /cache, /db)
//	GET /metrics                        Prometheus metrics
//	GET /healthz                        "ok" (never needs a token; 503 while shutting down)
//	GET, POST /login; POST /logout      the monitor page's login form when tokens are on (see Tokens)
//
// The N of the decode endpoints is decimal, or a key in a table's text form
// (tables.T.text, see keyset.TextForm: "ord_8VQTtCjBWgS"); the answer's "id"
// is always decimal and, for a text form, "table" names the table whose
// form it was. A key of a table with a spread shape (tables.T.shape) is
// decoded after undoing the shape; /decodeSnowflakeId then needs the
// table, from table=T or its text form, and refuses a bare decimal ID
// (the shapes read it differently). A keyed form's text (text.key_env)
// needs the secret in the server's environment: without it the answer is
// 500, naming the variable.
//
// The ID endpoints accept GET and POST. A segment key is a row of
// idsql_alloc (Leaf's biz_tag), 1 to 128 characters from
// [A-Za-z0-9_.:-], and reaches the database only as a bind parameter.
//
// The snowflake endpoint answers any key, as Leaf's does (Leaf has one
// snowflake generator and ignores the key): a key naming a snowflake table
// of the configuration takes that table's IDs, from its generator under
// its worker lease; every other key takes the IDs of the table named by
// Settings.SnowflakeTable, "leaf_snowflake" by default (idsql serve
// --snowflake-table). That table is a snowflake table like any other: it
// has a worker lease of its own, recorded in the worker table, so lookup
// traces its IDs to it. WithSnowflakeTable adds it to a configuration;
// under the local holder it needs a worker ID in holder.workers.
//
// # Errors, as Leaf answers them
//
// Leaf's LeafController turns every failed Result of a generator into a
// LeafServerException, status 500, and Spring Boot 1.5's error controller
// writes it as JSON. idsql answers every failure in that shape:
//
//	HTTP/1.1 500 Internal Server Error
//	Content-Type: application/json;charset=UTF-8
//	X-Idsql-Error: segment key "users": segments not ready: no range could be allocated (details in the server log)
//
//	{"timestamp":1700000000000,"status":500,"error":"Internal Server Error",
//	 "exception":"com.sankuai.inf.leaf.server.exception.LeafServerException",
//	 "message":"Result{id=-3, status=EXCEPTION}: segment key \"users\": segments not ready: ...",
//	 "path":"/api/segment/get/users"}
//
// The body is Leaf's, field for field (timestamp in Unix milliseconds).
// Its message starts with Leaf's Result, unchanged, for clients that match
// it, followed by ": " and idsql's own description of the problem, which
// says what to do where there is something to do. The description alone
// travels in the X-Idsql-Error header, goes to the monitor page and,
// rate-limited to a line a second, to the log (Settings.Log). Where Leaf
// has an answer for the situation, the Result id is Leaf's, and so is the
// status unless the client's request is at fault:
//
//	situation                                        status  message (Result id)
//	unknown segment key (not migrated, misspelt)      404    Result{id=-2, ...}  Leaf: key not in its cache (500 there)
//	segment key no key can be (bad characters)        400    Result{id=-2, ...}  Leaf: key not in its cache (500 there)
//	segment key list unreadable (database down,
//	  idsql_alloc missing: run idsql migrate)         500    Result{id=-2, ...}  Leaf: key not in its cache
//	segment mode off (no database)                    500    Result{id=-1, ...}  Leaf: cache not initialized
//	no range loaded: database down, wait timed out    500    Result{id=-3, ...}  Leaf: both segments not ready
//	snowflake generator failed to start, lease lost,
//	  new lease not acquired yet                      500    Result{id=-1, ...}  Leaf: not initialized
//	clock moved back more than snowflake.max_backward 500    Result{id=-3, ...}  Leaf: clock back more than 5 ms
//	empty key (/api/segment/get/)                     404    idsql's description  Spring: no handler
//
// A generator failure Leaf has no answer for (ID space exhausted, an
// unforeseen error) is a 500 with exception LeafServerException and
// idsql's description as the message. Failures of idsql's own making are
// answered in the same JSON shape, without an exception, with the status
// that fits and idsql's description as the message:
//
//	400 invalid count, bad snowflakeId,    401 missing or wrong token
//	    missing or bad ?shard of a sharded table
//	404 no such endpoint, a snowflake key  405 method not allowed
//	    when Settings.SnowflakeOff
//	503 shutting down, request canceled
//
// Known differences from Leaf: Leaf answers "0" with status 200 when its
// segment or snowflake mode is turned off, and idsql never issues 0;
// Leaf's Spring Boot sends browsers (Accept: text/html) an HTML error page,
// idsql sends the JSON to everyone; Leaf maps every method to the ID
// endpoints, idsql GET and POST.
//
// # Tokens
//
// With Settings.Tokens set, every endpoint but /healthz needs
// "Authorization: Bearer TOKEN". No other place is read: a token in the
// query string would end up in access logs and browser histories.
//
// A browser cannot send that header, so the monitor page answers it with a
// login form (status 401). Posting a token to /login sets a session cookie,
// idsql_session: HttpOnly and SameSite=Strict, holding an HMAC of the token
// under a key drawn when the server starts (so not the token itself, and
// no longer valid after a restart), compared in constant time. The cookie
// opens the monitor page only; the ID, decode and metrics endpoints stay
// Bearer-only. POST /logout deletes it.
//
// # Metrics
//
// /metrics is served from a registry of the Server's own (the global
// default registry is not touched): request latency histograms by
// endpoint and status code (idsql_http_request_duration_seconds), the time
// requests spend in their generator (idsql_generator_wait_seconds), the
// duration of segment refills when the generator allocates through a
// TimedStore (idsql_segment_refill_seconds), gauges of each segment key's
// buffers and each snowflake table's lease, counters of IDs served and
// errors by kind, and the standard go_, process_ and go_build_info
// collectors.
//
// # Example
//
//	cfg, _ = server.WithSnowflakeTable(cfg, "")      // the table for other snowflake keys
//	keys, _ := keyset.NewKeys(cfg, keyset.KeysOptions{DB: db})
//	ts := server.NewTimedStore(segmentStore)
//	gen, _ := segment.New(ctx, ts, segment.Settings{})
//	srv, err := server.New(server.Settings{Keys: keys, Segments: gen, Store: ts})
//	if err != nil { ... }
//	ln, _ := net.Listen("tcp", "127.0.0.1:8080")
//	err = srv.Serve(ctx, ln) // until ctx ends, then drains and releases leases
package server
