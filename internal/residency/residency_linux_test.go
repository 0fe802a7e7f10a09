package residency

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const sample = `00400000-01a4b000 r-xp 00000000 fe:00 10011233                           /opt/kroscope
Size:              22828 kB
Rss:                3180 kB
Anonymous:             0 kB
FilePmdMapped:         0 kB
01a4b000-0413c000 r--p 0164b000 fe:00 10011233                           /opt/kroscope
Size:              39876 kB
Rss:               35652 kB
Anonymous:             0 kB
0413c000-07014000 r--p 03d3c000 fe:00 10011233                           /opt/kroscope
Size:              47968 kB
Rss:               43808 kB
Anonymous:             8 kB
07015000-071b6000 rw-p 06c14000 fe:00 10011233                           /opt/kroscope
Size:               1668 kB
Rss:                1156 kB
Anonymous:           400 kB
7f0000000000-7f0000001000 r--p 00000000 fe:00 4242                       /usr/lib/other.so
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
7f0000002000-7f0000003000 r--p 00000000 fe:00 10011233                   /opt/kroscope (deleted)
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  12 kB
Anonymous:            12 kB
`

func TestParseSmaps(t *testing.T) {
	spans, rss := parseSmaps([]byte(sample), "/opt/kroscope")
	// The two read-only mappings of the binary without private pages; not
	// the relocated one (Anonymous 8 kB), the writable one, another file or
	// a deleted binary's.
	want := []span{{start: 0x400000, end: 0x1a4b000, rssKiB: 3180}, {start: 0x1a4b000, end: 0x413c000, rssKiB: 35652}}
	if len(spans) != len(want) {
		t.Fatalf("spans = %+v, want %+v", spans, want)
	}
	for i := range want {
		if spans[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, spans[i], want[i])
		}
	}
	if rss != 3180+35652 {
		t.Errorf("resident = %d KiB, want %d", rss, 3180+35652)
	}
}

// residentKiB is how much of this test binary's read-only mappings is
// resident now.
func residentKiB(t *testing.T) int64 {
	t.Helper()
	spans, rss := readOnlyExecutableSpans()
	if len(spans) == 0 {
		t.Skip("no read-only mapping of /proc/self/exe found (is /proc mounted?)")
	}
	return rss
}

func TestReleaseDropsTheBinarysPages(t *testing.T) {
	before := residentKiB(t)
	spans, beforeKiB := readOnlyExecutableSpans()
	r := dropAll(spans, beforeKiB) // what the first Release does
	after := residentKiB(t)
	if r.Spans == 0 || r.BeforeKiB < before {
		t.Errorf("Release() = %+v, want the mappings found and at least %d KiB resident before", r, before)
	}
	// Right after, only what ran since (this test, the runtime, reading
	// smaps) is back: a fraction of what initialising the binary touched.
	if after > before/2 {
		t.Errorf("resident after Release: %d KiB of %d before, want at most half", after, before)
	}
	t.Logf("binary resident: %d KiB before, %d KiB after", before, after)
}

func TestReleaseOptOut(t *testing.T) {
	t.Setenv(OptOut, "1")
	if r := Release(); r != (Result{}) {
		t.Errorf("Release() with %s set = %+v, want nothing done", OptOut, r)
	}
}

// cachedPages counts the executable's pages in the page cache (mincore on
// a mapping of the file, which faults nothing in).
func cachedPages(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Skip(err)
	}
	defer func() { _ = unix.Munmap(m) }()
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys/unix has no Mincore wrapper.
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skip(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// A later Release (the engine is ready) drops the mappings but leaves the
// page cache: what ran since the first one maps back from memory, not
// from the disk.
func TestReleaseAgainKeepsThePageCache(t *testing.T) {
	Release() // the first, dropping the page cache, unless a test ran it already
	// Code run since: read back into the page cache a page at a time.
	for i := range 3 {
		_ = fmt.Sprintf("%v %q %x", map[string]any{"a": i}, []string{"b"}, 1.5)
		_, _ = json.Marshal(map[string]any{"x": []any{i, "y", 2.5}})
		_ = regexp.MustCompile(`(a+)(b*)[c-z]{2,}`+strconv.Itoa(i)).FindAllStringSubmatch("aabbcd", -1)
	}
	before := cachedPages(t)
	r := Release()
	after := cachedPages(t)
	if r.Spans == 0 {
		t.Fatalf("Release() = %+v, want the mappings found", r)
	}
	if after < before-8 { // a few pages of slack for the kernel's own reclaim
		t.Errorf("the executable's pages in the page cache: %d before the second Release, %d after; want them kept", before, after)
	}
	t.Logf("pages cached: %d before, %d after", before, after)
}
