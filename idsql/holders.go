package idsql

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/local"
	"github.com/idsql/idsql/holder/registry"
)

// holder returns the holder for snowflake tables: KeysOptions.Holder or the
// one the configuration describes, recorded in the worker registry when
// there is one, so every lease is in idsql_workers before an ID is issued
// under it.
func (k *Keys) holder() (holder.Holder, error) {
	h := k.opts.Holder
	kind := "custom"
	if h == nil {
		var err error
		if h, kind, err = k.configuredHolder(); err != nil {
			return nil, err
		}
	}
	if k.opts.Registry != nil {
		h = registry.Recorded(h, k.opts.Registry, kind)
	}
	return h, nil
}

// configuredHolder builds the holder Config.Holder describes.
func (k *Keys) configuredHolder() (holder.Holder, string, error) {
	hc := k.cfg.Holder
	switch hc.Kind {
	case "", HolderLocal:
		dir := hc.CacheDir
		if dir == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return nil, "", fmt.Errorf("holder: local: no cache_dir and no user cache directory: %w", err)
			}
			dir = filepath.Join(base, "idsql", k.cfg.Namespace)
		}
		h, err := local.New(local.Settings{Workers: hc.Workers, Dir: dir})
		return h, HolderLocal, err
	}
	return nil, "", fmt.Errorf("holder: kind %q: set KeysOptions.Holder", hc.Kind)
}
