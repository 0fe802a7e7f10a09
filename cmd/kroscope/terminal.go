package main

import (
	"fmt"
	"os"

	"golang.org/x/term"
)

// needTerminal refuses to start the UI where it cannot draw: stdout is
// not a terminal, or no key can be read (stdin is not one, and there is no
// controlling terminal for bubbletea to open instead). Found by the UI
// itself, it was bubbletea's "could not open TTY", after the engine had
// started; instead is the command that needs none.
func needTerminal(instead string) error {
	if term.IsTerminal(int(os.Stdout.Fd())) && (term.IsTerminal(int(os.Stdin.Fd())) || ttyOpens()) {
		return nil
	}
	return fmt.Errorf("no terminal: the UI needs one on stdout and for keys; use `%s`, which prints one line per instance state change", instead)
}

// ttyOpens reports whether the controlling terminal can be opened, as
// bubbletea opens it when stdin is a pipe.
func ttyOpens() bool {
	f, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}
