package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// page is what the checks read of one Markdown file.
type page struct {
	path    string          // relative to the repository root, slash-separated
	anchors map[string]bool // GitHub's heading anchors
	links   []ref           // relative links and images
	rows    []ref           // table rows, for the code maps
}

// ref is a piece of text and the line it is on.
type ref struct {
	line int
	text string
}

var (
	fence    = regexp.MustCompile("^ {0,3}(```|~~~)")
	heading  = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	link     = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)`)
	scheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineAnch = regexp.MustCompile(`^L\d+(-L\d+)?$`)
	ident    = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$`)
)

// readPage reads root/rel: headings outside code fences become anchors;
// links inside code spans and fences are not links.
func readPage(root, rel string) (*page, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	p := &page{path: rel, anchors: map[string]bool{}}
	seen := map[string]int{}
	inFence := ""
	for i, l := range strings.Split(string(b), "\n") {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case m[1] == inFence:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		if m := heading.FindStringSubmatch(l); m != nil {
			s := slug(m[2])
			if n := seen[s]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		// Blank code spans out (same length), so `[x](y)` in code is no link.
		plain := codeSpan.ReplaceAllStringFunc(l, func(s string) string { return strings.Repeat("x", len(s)) })
		for _, m := range link.FindAllStringSubmatch(plain, -1) {
			p.links = append(p.links, ref{i + 1, m[1]})
		}
		if m := refDef.FindStringSubmatch(plain); m != nil {
			p.links = append(p.links, ref{i + 1, m[1]})
		}
		if strings.HasPrefix(strings.TrimSpace(l), "|") {
			p.rows = append(p.rows, ref{i + 1, l})
		}
	}
	return p, nil
}

// slug is GitHub's anchor for a heading: the text as rendered (links as
// their text, no code ticks or emphasis), lower-cased, without punctuation
// other than '-' and '_', spaces turned into '-'.
func slug(h string) string {
	h = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checker resolves links between the pages of one repository.
type checker struct {
	root  string
	pages map[string]*page
	decls map[string]map[string]bool // Go file → declared names
}

func newChecker(root string) *checker {
	return &checker{root: root, pages: map[string]*page{}, decls: map[string]map[string]bool{}}
}

func (c *checker) page(rel string) (*page, error) {
	if p, ok := c.pages[rel]; ok {
		return p, nil
	}
	p, err := readPage(c.root, rel)
	if err != nil {
		return nil, err
	}
	c.pages[rel] = p
	return p, nil
}

// check returns every problem of the pages, as "file:line: what".
func (c *checker) check(rels ...string) []string {
	var out []string
	for _, rel := range rels {
		p, err := c.page(rel)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		for _, l := range p.links {
			if why := c.resolve(p, l.text); why != "" {
				out = append(out, fmt.Sprintf("%s:%d: %s: %s", rel, l.line, l.text, why))
			}
		}
		for _, r := range p.rows {
			for _, why := range c.codeMap(p, r.text) {
				out = append(out, fmt.Sprintf("%s:%d: %s", rel, r.line, why))
			}
		}
	}
	return out
}

// resolve says what is wrong with a link from p ("" when nothing is).
func (c *checker) resolve(p *page, target string) string {
	if scheme.MatchString(target) {
		return "" // a web address: not checked (no network)
	}
	file, frag, _ := strings.Cut(target, "#")
	rel := p.path
	if file != "" {
		rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(rel))); err != nil {
			return "no such file " + rel
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(rel, ".md") {
		if lineAnch.MatchString(frag) {
			return ""
		}
		return "anchor #" + frag + " on a file that is not Markdown"
	}
	q, err := c.page(rel)
	if err != nil {
		return err.Error()
	}
	if !q.anchors[frag] {
		return "no heading in " + rel + " has the anchor #" + frag
	}
	return ""
}

// codeMap checks a table row that names functions: a cell that is one link
// to a Go file, followed by a cell of `names` only. Each name (Func,
// Type.Method, Type, a const or var) must be declared in that file.
func (c *checker) codeMap(p *page, row string) []string {
	cells := splitRow(row)
	var out []string
	for i := 0; i+1 < len(cells); i++ {
		m := link.FindStringSubmatch(cells[i])
		if m == nil || m[0] != cells[i] || !strings.HasSuffix(m[1], ".go") {
			continue
		}
		names, ok := namesCell(cells[i+1])
		if !ok {
			continue
		}
		rel := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), m[1])))
		decls, err := c.declared(rel)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		for _, n := range names {
			if !decls[n] {
				out = append(out, fmt.Sprintf("%s declares no %s", rel, n))
			}
		}
	}
	return out
}

// splitRow splits a Markdown table row into trimmed cells (\| stays in a cell).
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// namesCell reads "`A`, `B.c`": false unless the cell is only such names.
func namesCell(cell string) ([]string, bool) {
	var names []string
	for _, part := range strings.Split(cell, ",") {
		part = strings.TrimSpace(part)
		if len(part) < 3 || part[0] != '`' || part[len(part)-1] != '`' || !ident.MatchString(part[1:len(part)-1]) {
			return nil, false
		}
		names = append(names, part[1:len(part)-1])
	}
	return names, len(names) > 0
}

// declared lists what a Go file declares at the top level: functions,
// methods as Type.Method, types, consts and vars.
func (c *checker) declared(rel string) (map[string]bool, error) {
	if d, ok := c.decls[rel]; ok {
		return d, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(c.root, filepath.FromSlash(rel)), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	d := map[string]bool{}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			name := decl.Name.Name
			if decl.Recv != nil && len(decl.Recv.List) == 1 {
				name = recvType(decl.Recv.List[0].Type) + "." + name
			}
			d[name] = true
		case *ast.GenDecl:
			for _, s := range decl.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					d[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						d[n.Name] = true
					}
				}
			}
		}
	}
	c.decls[rel] = d
	return d, nil
}

// recvType is a receiver's type name: *T, T[P] and T are all "T".
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
