// Package idsql gives SQL tables distributed 64-bit primary keys without a
// database sequence.
//
// A Config (usually idsql.yaml, read with Load) names a namespace, a
// snowflake bit layout, a worker-ID holder and, per table, a key strategy:
//
//   - snowflake: time + worker + sequence (package idsql/snowflake), with the
//     worker ID leased from a holder (package holder);
//   - segment: ranges handed out by a database row and double-buffered in
//     memory (package idsql/segment).
//
// The same file drives the database/sql wrapper, the code generator
// (cmd/idsqlgen), the idsql command and its HTTP ID server.
package idsql
