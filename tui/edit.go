package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// InstanceEditor is what `E` needs of a backend: the instance's editable
// spec and a way to write it back (the engine writes it as kroscope's
// field manager). The TUI never calls the API server itself.
type InstanceEditor interface {
	EditableInstance(ctx context.Context, key state.InstanceKey) ([]byte, error)
	ApplyInstanceEdit(ctx context.Context, key state.InstanceKey, doc []byte) error
}

// editTimeout bounds each call to the backend during an edit.
const editTimeout = 30 * time.Second

// editSession is one `E`: the file the editor works on and what was last
// put in it, so an unchanged save cancels (as kubectl edit does).
type editSession struct {
	key   state.InstanceKey
	label string
	path  string
	sent  string // the document last written to the file (comments stripped)
	// refused is the API server's error on the last edit sent, if any:
	// quitting unchanged then applies nothing, which is not "no change".
	refused string
}

type (
	editOpenMsg struct {
		key   state.InstanceKey
		label string
		doc   []byte
		err   error
	}
	editDoneMsg struct {
		s   *editSession
		err error
	}
	editAppliedMsg struct {
		s   *editSession
		doc string
		err error
	}
)

// startEdit fetches the instance's spec to open it in $EDITOR.
func (t targeting) startEdit() tea.Cmd {
	in := t.in()
	if in == nil {
		return nil
	}
	label := name(in)
	if snap := t.snap(); snap != nil && snap.Mode.Forced {
		t.c.host.flash("not editing "+label+": kroscope runs read-only (--observe)", true)
		return nil
	}
	ed, ok := t.c.b.(InstanceEditor)
	if !ok {
		t.c.host.flash("this backend cannot edit instances", true)
		return nil
	}
	key := in.Key
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), editTimeout)
		defer cancel()
		doc, err := inert(ed.EditableInstance(ctx, key)) // bytes for the editor: as they are
		return editOpenMsg{key: key, label: label, doc: doc, err: err}
	}
}

// editHeader is the comment block above the document, with the last
// error from the API server when there is one.
func editHeader(label, lastErr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Editing %s. Only the spec is applied, as field manager kroscope.\n", label)
	b.WriteString("# Save and quit to apply; quit without changes to cancel.\n")
	if lastErr != "" {
		b.WriteString("#\n# The API server refused the last edit:\n")
		for _, l := range strings.Split(lastErr, "\n") {
			b.WriteString("# error: " + l + "\n")
		}
	}
	b.WriteString("#\n")
	return b.String()
}

// stripHeader drops the leading comment lines the user may have kept.
func stripHeader(s string) string {
	lines := strings.Split(s, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
		i++
	}
	return strings.TrimSpace(strings.Join(lines[i:], "\n"))
}

// editorCommand is $KUBE_EDITOR, $EDITOR or vi, as kubectl edit picks it.
func editorCommand(path string) *exec.Cmd {
	ed := os.Getenv("KUBE_EDITOR")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	if ed == "" {
		ed = "vi"
	}
	f := strings.Fields(ed)
	return exec.Command(f[0], append(f[1:], path)...)
}

// openEditor writes the document (with the header) and runs the editor
// with the terminal handed over.
func openEditor(c *common, s *editSession, doc, lastErr string) tea.Cmd {
	if err := os.WriteFile(s.path, []byte(editHeader(s.label, lastErr)+doc+"\n"), 0o600); err != nil {
		c.host.flash("edit "+s.label+": "+err.Error(), true)
		_ = os.Remove(s.path)
		return nil
	}
	s.sent, s.refused = strings.TrimSpace(doc), lastErr
	return tea.ExecProcess(editorCommand(s.path), func(err error) tea.Msg { return editDoneMsg{s: s, err: err} })
}

// updateEdit handles the edit's messages.
func updateEdit(c *common, msg tea.Msg) tea.Cmd {
	cmd, _ := editStep(c, msg)
	return cmd
}

// editStep is updateEdit's one step; false for any other message.
func editStep(c *common, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case editOpenMsg:
		if msg.err != nil {
			c.host.flash("edit "+msg.label+": "+msg.err.Error(), true)
			return nil, true
		}
		f, err := os.CreateTemp("", "kroscope-edit-*.yaml")
		if err != nil {
			c.host.flash("edit "+msg.label+": "+err.Error(), true)
			return nil, true
		}
		_ = f.Close()
		s := &editSession{key: msg.key, label: msg.label, path: f.Name()}
		return openEditor(c, s, string(bytes.TrimSpace(msg.doc)), ""), true
	case editDoneMsg:
		s := msg.s
		if msg.err != nil {
			_ = os.Remove(s.path)
			c.host.flash("the editor failed: "+msg.err.Error(), true)
			return nil, true
		}
		b, err := os.ReadFile(s.path)
		if err != nil {
			c.host.flash("edit "+s.label+": "+err.Error(), true)
			return nil, true
		}
		doc := stripHeader(string(b))
		if doc == s.sent {
			_ = os.Remove(s.path)
			if s.refused != "" {
				c.host.flash("edit of "+s.label+" cancelled, nothing applied: the API server refused it: "+s.refused, true)
				return nil, true
			}
			c.host.flash("edit of "+s.label+" cancelled: no change", false)
			return nil, true
		}
		ed, _ := c.b.(InstanceEditor)
		key := s.key
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), editTimeout)
			defer cancel()
			return editAppliedMsg{s: s, doc: doc, err: inertErr(ed.ApplyInstanceEdit(ctx, key, []byte(doc)))}
		}, true
	case editAppliedMsg:
		s := msg.s
		if msg.err != nil {
			// As kubectl edit does: back into the editor with the error on top.
			return openEditor(c, s, msg.doc, msg.err.Error()), true
		}
		_ = os.Remove(s.path)
		c.host.flash("applied the edit of "+s.label+" (field manager kroscope)", false)
		return nil, true
	}
	return nil, false
}
