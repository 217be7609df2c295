package idsql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/local"
	"github.com/idsql/idsql/holder/postgres"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/holder/zookeeper"
)

// holder returns the holder for snowflake tables: KeysOptions.Holder or the
// one the configuration describes. Leases are recorded in the worker
// registry, when there is one, before any ID is issued under them; the
// postgres holder keeps its leases there itself.
func (k *Keys) holder() (holder.Holder, error) {
	if h := k.opts.Holder; h != nil {
		if k.opts.Registry == nil {
			return h, nil
		}
		return registry.Recorded(h, k.opts.Registry, "custom"), nil
	}
	hc := k.cfg.Holder
	switch hc.Kind {
	case HolderPostgres, HolderMySQL:
		if k.opts.Registry == nil {
			return nil, fmt.Errorf("holder: %s: needs the worker registry on a PostgreSQL or MySQL database (KeysOptions.Registry)", hc.Kind)
		}
		return postgres.New(k.opts.Registry, postgres.Settings{Mode: postgres.Mode(hc.Mode), TTL: hc.SessionTimeout})
	case HolderZooKeeper:
		dir, err := k.cacheDir()
		if err != nil {
			return nil, err
		}
		h, err := zookeeper.New(zookeeper.Settings{Servers: hc.Servers, Mode: zookeeper.Mode(hc.Mode),
			SessionTimeout: hc.SessionTimeout, CacheDir: dir, Now: k.opts.now()})
		if err != nil {
			return nil, err
		}
		k.closers = append(k.closers, func(_ context.Context) error { return h.Close() })
		return k.recorded(h, "zookeeper/"+hc.Mode), nil
	default: // local
		dir, err := k.cacheDir()
		if err != nil {
			return nil, err
		}
		h, err := local.New(local.Settings{Workers: hc.Workers, Dir: dir, Now: k.opts.now()})
		if err != nil {
			return nil, err
		}
		return k.recorded(h, string(HolderLocal)), nil
	}
}

// recorded wraps h for the worker registry when there is one.
func (k *Keys) recorded(h holder.Holder, kind string) holder.Holder {
	if k.opts.Registry == nil {
		return h
	}
	return registry.Recorded(h, k.opts.Registry, kind)
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
