package idsql

import (
	"fmt"

	"github.com/idsql/idsql/holder"
)

// defaultHolder builds the holder the configuration describes.
func (k *Keys) defaultHolder() (holder.Holder, error) {
	h := k.cfg.Holder
	switch h.Kind {
	case "", HolderLocal:
		if w, ok := h.Workers[k.opts.Instance.Key()]; ok {
			return holder.Fixed(w), nil
		}
		return nil, fmt.Errorf("holder: no worker ID for instance %q in holder.workers", k.opts.Instance.Key())
	}
	return nil, fmt.Errorf("holder: kind %q: set KeysOptions.Holder", h.Kind)
}
