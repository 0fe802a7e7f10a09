package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// InstanceReader is what the Instance tab asks of a backend that can read
// more than the snapshot holds (the engine does: the instance from its
// cache, its Events from the API server). The TUI itself never calls the
// API server; a backend without it shows the tab from the snapshot only.
type InstanceReader interface {
	InstanceDetail(ctx context.Context, key state.InstanceKey) (state.InstanceDetail, error)
}

// instanceRefresh is how often the Instance tab re-reads while on screen,
// besides whenever the instance changes.
const instanceRefresh = 2 * time.Second

// instanceData is the Instance tab's state: the last read and whether one
// is in flight.
type instanceData struct {
	key      state.InstanceKey
	detail   *state.InstanceDetail
	err      string
	yaml     bool // y: the whole object as YAML
	fetching bool
	version  uint64    // the instance Version the last read was asked at
	asked    time.Time // when it was asked
}

// instanceDetailMsg carries a read back to the pane that asked.
type instanceDetailMsg struct {
	key    state.InstanceKey
	detail state.InstanceDetail
	err    error
}

// fetch returns the read to run when the tab is on screen and what it shows
// is stale (another instance, the instance changed, or instanceRefresh
// passed); nil otherwise.
func (d *instanceData) fetch(b Backend, in *state.Instance, now time.Time) tea.Cmd {
	r, ok := b.(InstanceReader)
	if !ok || in == nil || d.fetching {
		return nil
	}
	if d.key == in.Key && d.detail != nil && d.version == in.Version && now.Sub(d.asked) < instanceRefresh {
		return nil
	}
	if d.key != in.Key {
		*d = instanceData{key: in.Key, yaml: d.yaml}
	}
	d.fetching, d.version, d.asked = true, in.Version, now
	key := in.Key
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		det, err := inert(r.InstanceDetail(ctx, key))
		return instanceDetailMsg{key: key, detail: det, err: err}
	}
}

// take stores a read for the instance it was asked for.
func (d *instanceData) take(msg instanceDetailMsg) {
	if msg.key != d.key {
		return
	}
	d.fetching = false
	if msg.err != nil {
		d.err = msg.err.Error()
		return
	}
	det := msg.detail
	d.detail, d.err = &det, ""
}

// instanceView is the Instance tab: the instance's spec, status,
// conditions, Events and inventory of children; with y, its whole YAML.
func instanceView(th *theme.Theme, in *state.Instance, d *instanceData, w int, now time.Time) []string {
	var det *state.InstanceDetail
	if d.key == in.Key {
		det = d.detail
	}
	if d.yaml {
		if det == nil {
			return []string{th.Dim.Render("(the instance object is not read yet)")}
		}
		return strings.Split(strings.TrimRight(toYAML(det.Object), "\n"), "\n")
	}
	out := []string{th.Bold.Render(in.Kind+" "+name(in)) + "  " + th.State(in.State, stateWord(in.State), 0) +
		th.Dim.Render(fmt.Sprintf("  gen %d/%d", in.ObservedGeneration, in.Generation))}
	if d.err != "" && d.key == in.Key {
		out = append(out, th.ClassStyle(state.ClassFailed).Render(clip("cannot read the instance: "+d.err, w, th.G.Ellipsis)))
	}
	section := func(title string) { out = append(out, "", th.Header.Render(fit(title, w, ""))) }
	if det == nil {
		out = append(out, th.Dim.Render("(spec, status and Events: reading"+th.G.Ellipsis+")"))
	} else {
		section("SPEC")
		out = append(out, indented(yamlOf(det.Object["spec"]), w)...)
		section("STATUS")
		status, _ := det.Object["status"].(map[string]any)
		rest := map[string]any{}
		for k, v := range status {
			if k != "conditions" {
				rest[k] = v
			}
		}
		out = append(out, indented(yamlOf(rest), w)...)
		section("CONDITIONS")
		out = append(out, conditionsTable(th, det.Conditions, w)...)
		section("EVENTS (newest first)")
		out = append(out, eventsTable(th, det, w, now)...)
	}
	section("INVENTORY")
	out = append(out, inventory(th, in, w)...)
	return out
}

func yamlOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	return toYAML(m)
}

func indented(text string, w int) []string {
	if text == "" {
		return []string{"  (none)"}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		out = append(out, clip("  "+l, w, "…"))
	}
	return out
}

func conditionsTable(th *theme.Theme, cs []state.Condition, w int) []string {
	if len(cs) == 0 {
		return []string{th.Dim.Render("  (none)")}
	}
	row := func(typ, st, reason, gen, last, msg string) string {
		return "  " + fit(typ, 18, "…") + " " + fit(st, 7, "") + " " + fit(reason, 20, "…") + " " + fit(gen, 4, "") + " " + fit(last, 9, "") + " " + msg
	}
	out := []string{th.Dim.Render(clip(row("TYPE", "STATUS", "REASON", "GEN", "SINCE", "MESSAGE"), w, ""))}
	for _, c := range cs {
		st := c.Status
		switch c.Status {
		case "True":
			st = th.ClassStyle(state.ClassOK).Render(fit(st, 7, ""))
		case "False":
			st = th.ClassStyle(state.ClassFailed).Render(fit(st, 7, ""))
		}
		last := "-"
		if !c.LastTransition.IsZero() {
			last = c.LastTransition.Format("15:04:05")
		}
		gen := "-"
		if c.ObservedGeneration > 0 {
			gen = fmt.Sprint(c.ObservedGeneration)
		}
		out = append(out, clip(row(c.Type, st, c.Reason, gen, last, strings.ReplaceAll(c.Message, "\n", " ")), w, th.G.Ellipsis))
	}
	return out
}

func eventsTable(th *theme.Theme, det *state.InstanceDetail, w int, now time.Time) []string {
	if det.EventsErr != "" {
		return []string{th.Warn.Render(clip("  "+det.EventsErr, w, th.G.Ellipsis))}
	}
	if len(det.Events) == 0 {
		return []string{th.Dim.Render("  (none)")}
	}
	row := func(age, typ, reason, from, msg string) string {
		return "  " + fit(age, 5, "") + " " + fit(typ, 7, "") + " " + fit(reason, 20, "…") + " " + fit(from, 12, "…") + " " + msg
	}
	out := []string{th.Dim.Render(clip(row("LAST", "TYPE", "REASON", "FROM", "MESSAGE"), w, ""))}
	for _, e := range det.Events {
		typ := e.Type
		if e.Type == "Warning" {
			typ = th.Warn.Render(fit(typ, 7, ""))
		}
		msg := strings.ReplaceAll(e.Message, "\n", " ")
		if e.Count > 1 {
			msg = fmt.Sprintf("(x%d) %s", e.Count, msg)
		}
		out = append(out, clip(row(ago(now, e.Last), typ, e.Reason, e.Source, msg), w, th.G.Ellipsis))
	}
	return out
}

// inventory lists the instance's children as the graph last saw them.
func inventory(th *theme.Theme, in *state.Instance, w int) []string {
	if len(in.Resources) == 0 {
		return []string{th.Dim.Render("  (none)")}
	}
	idW := 4
	for _, r := range in.Resources {
		idW = max(idW, len(r.ID))
	}
	idW = min(idW, 20)
	out := []string{th.Dim.Render(clip("  "+fit("ID", idW, "")+" "+fit("KIND", 22, "")+" "+fit("STATE", 22, "")+" OBJECT", w, ""))}
	for _, r := range in.Resources {
		obj := r.Name
		if r.Namespace != "" && r.Name != "" {
			obj = r.Namespace + "/" + r.Name
		}
		if obj == "" {
			obj = "-"
		}
		if r.External {
			obj += " [external]"
		}
		out = append(out, clip("  "+fit(r.ID, idW, th.G.Ellipsis)+" "+fit(r.APIVersion+" "+r.Kind, 22, th.G.Ellipsis)+" "+
			th.Style(r.State).Render(fit(r.Phase().Word(), 22, th.G.Ellipsis))+" "+obj, w, th.G.Ellipsis))
	}
	return out
}
