package idsql

import "github.com/idsql/idsql/idsql/keyset"

// The configuration and the key set, which package keyset defines; the
// names here are the ones a program of the database/sql wrapper starts
// from. Programs on pgx (idsql/pgxid) and tools that only issue or read
// keys import keyset directly and link neither this package's driver nor
// sqlx.
type (
	// Config is keyset.Config: a namespace and its tables.
	Config = keyset.Config
	// Keys is keyset.Keys: the key sources of a Config's tables.
	Keys = keyset.Keys
	// KeysOptions is keyset.KeysOptions: where Keys keeps its records.
	KeysOptions = keyset.KeysOptions
)

// Load reads a configuration file (keyset.Load).
func Load(path string) (*Config, error) { return keyset.Load(path) }

// NewKeys starts the key sources of cfg's tables (keyset.NewKeys).
func NewKeys(cfg *Config, opts KeysOptions) (*Keys, error) { return keyset.NewKeys(cfg, opts) }

// ShardOf places a value of a shard column in one of 2^bits shards
// (keyset.ShardOf).
func ShardOf(value any, bits int) (int, error) { return keyset.ShardOf(value, bits) }

// Errors that keyset defines, by the names the README gave them here.
var (
	// Deprecated: use keyset.ErrKeySpaceExhausted.
	ErrKeySpaceExhausted = keyset.ErrKeySpaceExhausted
	// Deprecated: use keyset.ErrSharded.
	ErrSharded = keyset.ErrSharded
	// Deprecated: use keyset.ErrAmbiguousKey.
	ErrAmbiguousKey = keyset.ErrAmbiguousKey
	// Deprecated: use keyset.ErrTextKey.
	ErrTextKey = keyset.ErrTextKey
)
