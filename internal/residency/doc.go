// Package residency keeps a long-running kroscope's resident set to the
// code it runs.
//
// Linux keeps an executable in the page cache in large folios (up to
// 2 MiB), and recent kernels (6.18 here) map the whole folio on a fault: a
// Go binary of 100 MB then shows some 50-80 MB resident after touching a
// little code in each 2 MiB. Release drops those mappings and has later
// faults read the binary a page at a time, so what stays resident is what
// runs. It does nothing on other systems, or when KROSCOPE_KEEP_BINARY_PAGES
// is set.
package residency

// OptOut is the environment variable that, when set to anything, keeps the
// binary's pages as the kernel mapped them.
const OptOut = "KROSCOPE_KEEP_BINARY_PAGES"

// Result says what Release did.
type Result struct {
	// Spans is how many of the executable's mappings were released.
	Spans int
	// BeforeKiB is how much of the executable was resident before.
	BeforeKiB int64
}
