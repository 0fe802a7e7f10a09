package procstatus

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKB(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(p, []byte("Name:\tx\nVmHWM:\t  65356 kB\nRssAnon:\t   17352 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if kb, ok := KB(p, "VmHWM:"); !ok || kb != 65356 {
		t.Errorf("VmHWM = %d, %v; want 65356", kb, ok)
	}
	if kb, ok := KB(p, "RssAnon:"); !ok || kb != 17352 {
		t.Errorf("RssAnon = %d, %v; want 17352", kb, ok)
	}
	if _, ok := KB(p, "RssFile:"); ok {
		t.Error("a missing line was found")
	}
	if _, ok := KB(filepath.Join(t.TempDir(), "none"), "VmHWM:"); ok {
		t.Error("a missing file was read")
	}
}

// statm's resident and shared pages, as KiB of anonymous and file-backed
// memory; a short or garbled file is no answer.
func TestRSS(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "statm")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kb := int64(os.Getpagesize() / 1024)
	if anon, file, ok := RSS(write("400000 30000 8000 1500 0 60000 0\n")); !ok || anon != 22000*kb || file != 8000*kb {
		t.Errorf("RSS = %d, %d, %v; want %d, %d", anon, file, ok, 22000*kb, 8000*kb)
	}
	for _, bad := range []string{"", "1 2", "1 x 3", "1 2 3"} {
		if _, _, ok := RSS(write(bad)); ok {
			t.Errorf("%q read as an answer", bad)
		}
	}
	if anon, file, ok := RSS("/proc/self/statm"); !ok || anon <= 0 || file <= 0 {
		t.Errorf("this process: %d, %d, %v", anon, file, ok)
	}
}
