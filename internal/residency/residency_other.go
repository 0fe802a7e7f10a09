//go:build !linux

package residency

// Release does nothing here: the large-folio mapping it works around is
// Linux's.
func Release() Result { return Result{} }
