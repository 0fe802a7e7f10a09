package residency

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Release drops this process's mappings of the executable's read-only
// segments, asks the kernel not to read ahead around later faults in them,
// and drops the executable's pages from the page cache where no other
// process maps them. Whatever runs next is faulted back a page at a time:
// the first second after it is slower by the reads (about 0.2 s in all on
// the machine this was measured on), and the process's file-backed
// resident set is then the code it runs, not the 2 MiB folios around it.
//
// Called again (once the engine is ready), it only drops the mappings: the
// page cache holds what ran since the first call as single pages (read
// one at a time), so what runs next maps them back from memory. Reading
// them from the disk again cost the first instance to reconcile 30-80 ms
// (against 5-12 ms).
func Release() Result {
	if os.Getenv(OptOut) != "" {
		return Result{}
	}
	spans, before := readOnlyExecutableSpans()
	if len(spans) == 0 {
		return Result{}
	}
	if released.Swap(true) {
		for _, s := range spans {
			madvise(s, unix.MADV_DONTNEED)
		}
		return Result{Spans: len(spans), BeforeKiB: before}
	}
	return dropAll(spans, before)
}

// dropAll drops the mappings and the page cache (see Release).
func dropAll(spans []span, before int64) Result {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return Result{}
	}
	defer f.Close()
	// A binary written moments ago (go build) is still dirty in the page
	// cache, and dirty pages are neither reclaimed nor dropped: write them
	// now, as the kernel would within half a minute anyway.
	_ = unix.Fdatasync(int(f.Fd()))
	for _, s := range spans {
		// MADV_RANDOM first: the faults that follow at once (this very
		// code, and the runtime's threads) must read single pages, not
		// bring large folios back.
		madvise(s, unix.MADV_RANDOM)
		// MADV_PAGEOUT unmaps and reclaims in one step, so nothing can
		// fault a large folio back in between; it needs the caller to own
		// the file (or be able to write it), so MADV_DONTNEED unmaps the
		// rest for the fadvise below.
		madvise(s, unix.MADV_PAGEOUT)
		madvise(s, unix.MADV_DONTNEED)
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	return Result{Spans: len(spans), BeforeKiB: before}
}

// released is set once Release has dropped the page cache.
var released atomic.Bool

// span is one mapping of the executable.
type span struct {
	start, end uintptr
	rssKiB     int64
}

func madvise(s span, advice int) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, uintptr(advice))
}

// readOnlyExecutableSpans returns the mappings of the running executable
// that are not writable and hold no private (anonymous) pages, and how much
// of them is resident. Dropping those mappings loses nothing: every page
// comes back from the file as it was. A segment that a dynamic loader
// relocated and then made read-only holds private pages and is left alone.
func readOnlyExecutableSpans() ([]span, int64) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, 0
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, 0
	}
	return parseSmaps(data, exe)
}

// parseSmaps reads /proc/PID/smaps text for the read-only, private-page-free
// mappings of path.
func parseSmaps(data []byte, path string) ([]span, int64) {
	var (
		spans []span
		cur   span
		in    bool
		total int64
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			// A mapping's first line: "start-end perms offset dev inode path".
			in = false
			if len(fields) == 6 && fields[5] == path && !strings.Contains(fields[1], "w") {
				lo, hi, ok := strings.Cut(fields[0], "-")
				a, err1 := strconv.ParseUint(lo, 16, 64)
				b, err2 := strconv.ParseUint(hi, 16, 64)
				if ok && err1 == nil && err2 == nil && b > a {
					cur, in = span{start: uintptr(a), end: uintptr(b)}, true
				}
			}
			continue
		}
		if !in || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			cur.rssKiB = kb
		case "Anonymous:":
			// Rss comes before Anonymous in every mapping's lines.
			if kb == 0 {
				spans = append(spans, cur)
				total += cur.rssKiB
			}
			in = false
		}
	}
	return spans, total
}
