package keyset

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
	_ "github.com/idsql/idsql/holder/local" // the default holder kind: no dependency beyond the standard library
	"github.com/idsql/idsql/holder/registry"
)

// holderKind returns the holder kind the configuration names (local when
// it names none), as registered in package kinds; a kind whose package the
// program does not link is an error naming the import to add.
func holderKind(kind HolderKind) (holderkind.Kind, error) {
	return holderkind.Lookup(holderName(kind))
}

// holderName is the name of a configured holder kind: local when empty.
func holderName(kind HolderKind) string { return string(cmp.Or(kind, holderLocal)) }

// holder returns the holder for snowflake tables: KeysOptions.Holder or the
// one the configuration describes. Leases are recorded in the worker
// registry, when there is one, before any ID is issued under them; a kind
// that keeps its leases there itself (postgres) is not wrapped.
func (k *Keys) holder() (holder.Holder, error) {
	if h := k.opts.Holder; h != nil {
		if k.opts.Registry == nil {
			return h, nil
		}
		return registry.Recorded(h, k.opts.Registry, "custom"), nil
	}
	hc := k.cfg.Holder
	kind, err := holderKind(hc.Kind)
	if err != nil {
		return nil, fmt.Errorf("holder: %w", err)
	}
	var dir string
	if kind.CacheDir {
		if dir, err = k.cacheDir(); err != nil {
			return nil, err
		}
	}
	s := hc.settings()
	s.Workers, s.CacheDir, s.Now, s.Registry, s.Logger = k.workers, dir, k.opts.Now(), k.opts.Registry, k.opts.Logger
	h, err := kind.New(s)
	if err != nil {
		return nil, err
	}
	if c, ok := h.(io.Closer); ok {
		k.closers = append(k.closers, func(context.Context) error { return c.Close() })
	}
	if kind.Records || k.opts.Registry == nil {
		return h, nil
	}
	// The kind recorded: "local", or "zookeeper/sticky" for a kind with
	// several modes.
	label := holderName(hc.Kind)
	if len(kind.Modes) > 1 {
		mode := hc.Mode
		if mode == "" {
			mode = kind.Modes[0]
		}
		label += "/" + mode
	}
	return registry.Recorded(h, k.opts.Registry, label), nil
}

// cacheDir is where holders keep their cache files: holder.cache_dir, or
// idsql/<namespace> in the user cache directory.
func (k *Keys) cacheDir() (string, error) {
	if dir := k.cfg.Holder.CacheDir; dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("holder: no holder.cache_dir and no user cache directory: %w", err)
	}
	return filepath.Join(base, "idsql", k.cfg.Namespace), nil
}
