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
