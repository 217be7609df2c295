// Package gen generates typed ID helpers from an idsql configuration
// (idsql.yaml): one Go file per package, usually written by cmd/idsqlgen
// through go generate:
//
//	go get -tool github.com/idsql/idsql/cmd/idsqlgen    # once: a tool directive in go.mod
//
//	//go:generate go tool idsqlgen -config idsql.yaml -pkg models -out idsql_gen.go
//
// For every configured table the file declares, with OrderID standing for
// the table's type (orders -> OrderID, public.order_items -> OrderItemID;
// go_name in the configuration overrides the derived name):
//
//   - type OrderID int64 and const OrderIDTable = "orders";
//   - NewOrderID(ctx, src) and NewOrderIDs(ctx, src, n): keys from the
//     generators the idsql wrapper fills INSERTs with (src is an IDSource:
//     *keyset.Keys or *idsql.DB);
//   - DecodeOrderID(int64) and OrderID.Decode: time, worker and sequence of
//     a snowflake ID, decoded with the layout baked into the file (a
//     segment ID decodes to its value only); OrderID.Origin: the lease or
//     segment range an ID came from, through idsql.Lookup;
//   - ParseOrderID, String, MarshalText/UnmarshalText, MarshalJSON (a JSON
//     string: JavaScript numbers lose precision above 2^53) and
//     UnmarshalJSON (a string or a number), Value and Scan (NULL is an
//     error; use *OrderID or sql.Null[OrderID] for nullable columns). The
//     text is decimal, or the table's text form when it has one
//     (`text: {encoding: base62, prefix: ord_}`, see keyset.TextForm): then
//     OrderID.TextForm returns it, the text methods write and read it, and
//     ParseOrderID refuses any other prefix, so a UserID's text does not
//     parse as an OrderID. A keyed form (key_env) reads its secret from the
//     environment when used, and MarshalText/MarshalJSON fail without it;
//     a typeid form is bound to the file's layout (WithLayout);
//
// and once per file:
//
//   - IDSource, the interface the constructors take (keyid.Source);
//   - ErrInvalidID, wrapped by every parse, scan and decode error
//     (keyid.ErrInvalid);
//   - CheckConfig(cfg), which fails when the running configuration differs
//     from the one the file was generated from (layout, tables, strategies,
//     go_name);
//   - LookupTable(ctx, db, cfg, id), which names the generated type an
//     arbitrary ID belongs to.
//
// The generated file is thin: it declares the types and what depends on
// the configuration (table names, the snowflake layout, the list of
// tables). Its functions are one-line calls: into package idsql/keyid,
// which does the parsing, JSON, SQL scanning, decoding, checks and lookups,
// or into strconv for printing. A fix in keyid reaches every generated file
// with the next idsql release, without regenerating.
//
// # Keeping the file fresh
//
// The generated code depends on the configuration, so a configuration
// changed without regenerating must not go unnoticed. Two guards catch it:
//
//   - the drift check in scripts/test runs go generate ./... and fails when
//     that changes the tree, so a stale file cannot pass the test suite;
//   - CheckConfig compares the configuration a program runs with against
//     the one baked into the file and names every difference; call it where
//     the configuration is loaded. Origin and LookupTable call it
//     themselves.
//
// Compile-time guards in the file assert that *keyset.Keys and *idsql.DB
// still satisfy IDSource and that every type keeps its interfaces, so an
// incompatible idsql release fails to compile rather than misbehave. The
// file has no init function and no package-level state beyond ErrInvalidID.
//
// Generated code imports only the standard library, idsql, idsql/keyid and
// idsql/snowflake. It is rendered with jennifer and is gofmt-clean.
package gen
