// Package keyset is idsql's configuration and its key set: a Config (read
// from idsql.yaml with Load, or Parse) names a namespace, a snowflake bit
// layout, a worker-ID holder and, per table, a key strategy, a shape and
// a text form; NewKeys starts the key sources of its tables (Keys): a
// snowflake generator per snowflake table under a worker lease from the
// holder, segment ranges double-buffered in memory per segment table,
// with gene keys (shard and app bits), the Redis buffer and the key-space
// warnings.
//
// It is the layer every front door shares: the database/sql wrapper
// (package idsql, which names Config, Keys, KeysOptions, Load and NewKeys
// for its users), native pgx (idsql/pgxid), the code generator's runtime
// (idsql/keyid), the HTTP ID server and the idsql command. It links
// neither the database/sql wrapper nor sqlx, so a pgx-only program does
// not either.
package keyset
