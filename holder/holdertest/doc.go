// Package holdertest is the conformance suite every holder.Holder passes, in
// the style of testing/fstest: an implementation's test calls Run with a
// factory that makes a fresh Holder (one per simulated process) on a given
// clock.
//
//	func TestConformance(t *testing.T) {
//		holdertest.Run(t, func(t *testing.T, now func() time.Time) holder.Holder {
//			return myholder.New(myholder.Settings{Now: now, ...})
//		}, holdertest.Options{})
//	}
//
// The suite checks that concurrently held worker IDs never collide across
// many holders, that a lease's Done is closed before its worker ID can be
// handed out again (and a generator on it stops), that a holder refuses a
// worker ID whose persisted timestamp is ahead of the clock, and that a
// released lease can be acquired again.
package holdertest
