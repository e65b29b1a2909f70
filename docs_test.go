package kubesched_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
)

// modulePackage is one directory of the root module with Go files.
type modulePackage struct {
	dir   string // slash-separated, relative to the module root; "." for the root
	name  string // the package clause of its non-test files ("" when it has none)
	files []*ast.File
	tests []*ast.File
	fset  *token.FileSet
}

// modulePackages parses every package directory of the root module, leaving
// out nested modules (a directory with its own go.mod), testdata and hidden
// directories, as the go command does.
func modulePackages(t *testing.T) []modulePackage {
	t.Helper()
	var pkgs []modulePackage
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		base := d.Name()
		if path != "." {
			if base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		names, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil || len(names) == 0 {
			return err
		}
		p := modulePackage{dir: filepath.ToSlash(path), fset: token.NewFileSet()}
		for _, name := range names {
			f, err := parser.ParseFile(p.fset, name, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if strings.HasSuffix(name, "_test.go") {
				p.tests = append(p.tests, f)
				continue
			}
			p.name = f.Name.Name
			p.files = append(p.files, f)
		}
		pkgs = append(pkgs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// library reports whether the package is one a caller imports: it has
// non-test files, is not a command and is not internal.
func (p modulePackage) library() bool {
	return len(p.files) > 0 && p.name != "main" && !slices.Contains(strings.Split(p.dir, "/"), "internal")
}

// undocumented lists the exported names of f that have no doc comment, as
// pkg.Name, pkg.Type.Field, pkg.Type.Method or pkg.Iface.Method. A constant,
// variable or type in a parenthesised group counts as documented by the
// group's comment; a struct field by a comment on the line before it, a
// comment at the end of its line, or a comment on the first field of the
// run of lines it belongs to (fields with no blank line between them).
func undocumented(fset *token.FileSet, pkg string, f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv == nil {
				out = append(out, pkg+"."+d.Name.Name)
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
				out = append(out, pkg+"."+recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.Doc == nil && d.Doc == nil && s.Comment == nil {
						out = append(out, pkg+"."+s.Name.Name)
					}
					out = append(out, undocumentedMembers(fset, pkg+"."+s.Name.Name, s.Type)...)
				case *ast.ValueSpec:
					if s.Doc != nil || d.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, pkg+"."+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// undocumentedMembers lists the exported fields of a struct type, or the
// methods of an interface type, that have no comment of their own or of
// their run of lines. Embedded fields and interfaces are left out: their
// documentation is their type's.
func undocumentedMembers(fset *token.FileSet, prefix string, typ ast.Expr) []string {
	var fields *ast.FieldList
	switch t := typ.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return nil
	}
	var out []string
	documentedRun := false
	lastLine := -1
	for _, field := range fields.List {
		line := fset.Position(field.Pos()).Line
		if field.Doc != nil || line != lastLine+1 {
			documentedRun = field.Doc != nil
		}
		lastLine = fset.Position(field.End()).Line
		if field.Comment != nil {
			lastLine = fset.Position(field.Comment.End()).Line
		}
		if documentedRun || field.Comment != nil {
			continue
		}
		for _, n := range field.Names {
			if n.IsExported() {
				out = append(out, prefix+"."+n.Name)
			}
		}
	}
	return out
}

// receiverName is the name of a method's receiver type, its pointer and
// type parameters taken off.
func receiverName(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

func TestEveryExportedNameOfALibraryPackageHasADocComment(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if !p.library() {
			continue
		}
		var missing []string
		for _, f := range p.files {
			missing = append(missing, undocumented(p.fset, p.name, f)...)
		}
		if len(missing) > 0 {
			t.Errorf("%s: %d exported names without a doc comment:\n\t%s", p.dir, len(missing), strings.Join(missing, "\n\t"))
		}
	}
}

func TestEveryPackageHasAPackageDoc(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if len(p.files) == 0 {
			continue
		}
		if !slices.ContainsFunc(p.files, func(f *ast.File) bool { return f.Doc != nil }) {
			t.Errorf("%s: package %s has no package doc comment", p.dir, p.name)
		}
	}
}

func TestEveryLibraryPackageHasAnExampleThatRuns(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if p.library() && !slices.ContainsFunc(p.tests, hasExampleWithOutput) {
			t.Errorf("%s: package %s has no Example with an // Output: comment", p.dir, p.name)
		}
	}
}

// hasExampleWithOutput reports whether f has an Example function that go
// test runs: one with an "Output:" or "Unordered output:" comment.
func hasExampleWithOutput(f *ast.File) bool {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		for _, c := range f.Comments {
			if c.Pos() < fn.Body.Lbrace || c.End() > fn.Body.Rbrace {
				continue
			}
			text := strings.TrimSpace(c.Text())
			if strings.HasPrefix(text, "Output:") || strings.HasPrefix(text, "Unordered output:") {
				return true
			}
		}
	}
	return false
}

// readmeSection returns the lines of README.md's section called heading,
// up to the next heading of the same level.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("README.md has no line %q", heading)
	}
	level := heading[:strings.Index(heading, " ")+1]
	end := len(lines)
	inCode := false
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(lines[i], level) {
			end = i
			break
		}
	}
	return lines[start+1 : end]
}

// testCommand is the README's command to run every test: the first sh
// block of its section.
func testCommand(t *testing.T) string {
	t.Helper()
	section := readmeSection(t, "## Run every test")
	start := slices.Index(section, "```sh")
	if start < 0 {
		t.Fatal("README.md's section \"Run every test\" has no ```sh block")
	}
	end := slices.Index(section[start+1:], "```")
	if end < 0 {
		t.Fatal("README.md's ```sh block under \"Run every test\" does not end")
	}
	return strings.Join(section[start+1:start+1+end], "\n")
}

func TestCIRunsTheREADMEsTestCommand(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	// .ci/run ends with the command, after the line that announces it.
	const marker = "echo \"== tests (README: run every test)\"\n"
	_, ci, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf(".ci/run has no line %q", strings.TrimSpace(marker))
	}
	if got, want := strings.TrimSpace(ci), testCommand(t); got != want {
		t.Errorf(".ci/run runs, after %q:\n%s\nREADME.md's \"Run every test\" says:\n%s", strings.TrimSpace(marker), got, want)
	}
}

// TestEveryModuleIsInTheREADMEsTestCommand: every go.mod git tracks is
// a module the command tests, so a new one cannot go untested unnoticed.
func TestEveryModuleIsInTheREADMEsTestCommand(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "ls-files", "*go.mod").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout?)", err)
	}
	command := testCommand(t)
	for _, file := range strings.Fields(string(out)) {
		dir := filepath.Dir(file)
		if !regexp.MustCompile(`(^|[ (])` + regexp.QuoteMeta(dir) + `([ );]|$)`).MatchString(command) {
			t.Errorf("module %s is not in README.md's test command:\n%s", dir, command)
		}
	}
}

// TestTheREADMEsTestCommandRunsEveryModule runs the command with a fake go
// that logs where it runs and fails in one module, in sh and in bash.
func TestTheREADMEsTestCommandRunsEveryModule(t *testing.T) {
	t.Parallel()
	command := testCommand(t)
	modules := []string{".", "conformance", "examples/controller", "cmd/kubectl-kubesched", "hack/e2e"}
	for _, shell := range []string{"sh", "bash"} {
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("no %s: %v", shell, err)
			continue
		}
		for _, failing := range append([]string{""}, modules...) {
			name := shell + ", every module passing"
			if failing != "" {
				name = shell + ", " + failing + " failing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				for _, m := range modules {
					if err := os.MkdirAll(filepath.Join(root, m), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				bin := filepath.Join(root, "bin")
				log := filepath.Join(root, "log")
				// The fake logs the module it runs in, relative to root,
				// and fails in the one called failing.
				fake := `#!/bin/sh
dir=${PWD#"$FAKE_ROOT"}; dir=${dir#/}; dir=${dir:-.}
echo "$dir E2E=${KUBESCHED_E2E:-} RELEASE=${KUBESCHED_CONFORMANCE_RELEASE:-} $*" >>"$FAKE_LOG"
[ "$dir" != "$FAKE_FAILING" ]
`
				if err := os.MkdirAll(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(shell, "-c", command)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"FAKE_ROOT="+root, "FAKE_LOG="+log, "FAKE_FAILING="+failing)
				out, err := cmd.CombinedOutput()
				if failing == "" && err != nil {
					t.Errorf("the command failed with every module passing: %v\n%s", err, out)
				}
				if failing != "" && err == nil {
					t.Errorf("the command succeeded with %s failing\n%s", failing, out)
				}
				data, err := os.ReadFile(log)
				if err != nil {
					t.Fatal(err)
				}
				want := []string{
					". E2E= RELEASE= test -race -timeout 30m ./...",
					"conformance E2E= RELEASE= test -race -timeout 30m ./...",
					"examples/controller E2E= RELEASE= test -race -timeout 30m ./...",
					"cmd/kubectl-kubesched E2E= RELEASE= test -race -timeout 30m ./...",
					". E2E= RELEASE= test -timeout 30m ./loader/",
					"conformance E2E= RELEASE=1.36 test -race -count=1 -timeout 30m ./...",
					"hack/e2e E2E=1 RELEASE= test -race -count=1 -timeout 60m ./...",
				}
				if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, want) {
					t.Errorf("go ran as\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
			})
		}
	}
}

// pluginRow is one row of the README's plugin table.
type pluginRow struct {
	name, filter, score string
}

// pluginTable reads the table in README.md's section "Plugins".
func pluginTable(t *testing.T) []pluginRow {
	t.Helper()
	var rows []pluginRow
	inTable := false
	for _, line := range readmeSection(t, "## Plugins") {
		if strings.HasPrefix(line, "| Plugin | Filter | Score (default weight) |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		if len(cells) != 4 {
			t.Fatalf("README.md's plugin table: want 4 cells, got %d in %q", len(cells), line)
		}
		rows = append(rows, pluginRow{name: cells[0], filter: cells[1], score: cells[2]})
	}
	if len(rows) == 0 {
		t.Fatal("README.md's section \"Plugins\" has no plugin table")
	}
	return rows
}

// points returns the extension points a row of the plugin table names:
// Filter when its Filter cell starts with ✓ or says "Filter ✓", the other
// points when it names them, and Score with its weight when its Score cell
// starts with "✓ (weight".
func (r pluginRow) points(t *testing.T) (points []framework.ExtensionPoint, weight int32) {
	t.Helper()
	if strings.Contains(r.filter, "PreEnqueue") {
		points = append(points, framework.PreEnqueue)
	}
	if strings.HasPrefix(r.filter, "✓") || strings.Contains(strings.ReplaceAll(r.filter, "PostFilter ✓", ""), "Filter ✓") {
		points = append(points, framework.Filter)
	}
	if strings.Contains(r.filter, "PostFilter ✓") {
		points = append(points, framework.PostFilter)
	}
	if strings.Contains(r.filter, "Reserve ✓") {
		points = append(points, framework.Reserve)
	}
	if r.score != "–" {
		m := regexp.MustCompile(`^✓ \((\d+)`).FindStringSubmatch(r.score)
		if m == nil {
			t.Errorf("README.md's plugin table: %s's Score cell is neither – nor ✓ (weight...): %q", r.name, r.score)
			return points, 0
		}
		w, _ := strconv.Atoi(m[1])
		points, weight = append(points, framework.Score), int32(w)
	}
	return points, weight
}

func TestTheREADMEsPluginTableIsTheDefaultProfile(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	profile := f.Plugins()
	rows := pluginTable(t)
	var got, want []string
	for _, r := range rows {
		got = append(got, r.name)
	}
	for _, p := range profile {
		want = append(want, p.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's plugin table lists\n\t%v\nthe default profile is, in order,\n\t%v", got, want)
	}
	// The table names no PreFilter and no PreScore: they serve the points
	// it names.
	shown := []framework.ExtensionPoint{framework.PreEnqueue, framework.Filter, framework.PostFilter, framework.Score, framework.Reserve}
	for _, r := range rows {
		i := slices.IndexFunc(profile, func(p framework.PluginInfo) bool { return p.Name == r.name })
		if i < 0 {
			continue
		}
		var wantPoints []framework.ExtensionPoint
		for _, pt := range profile[i].Points {
			if slices.Contains(shown, pt) {
				wantPoints = append(wantPoints, pt)
			}
		}
		gotPoints, weight := r.points(t)
		slices.Sort(gotPoints)
		slices.Sort(wantPoints)
		if !slices.Equal(gotPoints, wantPoints) {
			t.Errorf("README.md's plugin table: %s at %v; the default profile runs it at %v", r.name, gotPoints, wantPoints)
		}
		if weight != profile[i].Weight {
			t.Errorf("README.md's plugin table: %s weighs %d; the default profile gives it %d", r.name, weight, profile[i].Weight)
		}
	}
}

func TestThePackageDocListsTheDefaultProfileInOrder(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\n// ", " ")
	_, list, ok := strings.Cut(text, "plugin for plugin and in its order:")
	if !ok {
		t.Fatal(`doc.go has no "plugin for plugin and in its order:"`)
	}
	list, _, _ = strings.Cut(list, ".")
	// Parentheses say what a plugin does, and may name another.
	list = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(list, "")
	var got []string
	for _, word := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if word != "and" {
			got = append(got, word)
		}
	}
	f, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range f.Plugins() {
		want = append(want, p.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("doc.go lists the default profile as\n\t%v\nit is\n\t%v", got, want)
	}
}

func TestTheREADMEsVersioningNamesTheKubernetesModulesRequired(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	section := strings.Join(readmeSection(t, "## Versioning"), "\n")
	section = strings.Join(strings.Fields(section), " ")
	m := regexp.MustCompile(`kube-scheduler v1\.(\d+\.\d+)`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README.md's Versioning names no kube-scheduler v1.x.y")
	}
	// The staging modules of Kubernetes v1.x.y are tagged v0.x.y.
	staging := "v0." + m[1]
	direct := regexp.MustCompile(`(?m)^\s*(k8s\.io/\S+) (\S+)\s*$`)
	found := 0
	// k8s.io/utils is not a staging module: it is required at the newest
	// version the staging modules require (pseudo-versions, which sort
	// by date), so that kubesched never raises it.
	graph, err := exec.Command("go", "mod", "graph").Output()
	if err != nil {
		t.Fatalf("go mod graph: %v", err)
	}
	utils := ""
	for _, m := range regexp.MustCompile(`(?m)^k8s\.io/[a-z-]+@`+regexp.QuoteMeta(staging)+` k8s\.io/utils@(\S+)$`).FindAllSubmatch(graph, -1) {
		utils = max(utils, string(m[1]))
	}
	for _, req := range direct.FindAllStringSubmatch(string(data), -1) {
		found++
		path, version := req[1], req[2]
		if path == "k8s.io/utils" {
			if version != utils {
				t.Errorf("go.mod requires k8s.io/utils %s; the %s modules require %q", version, staging, utils)
			}
		} else if version != staging {
			t.Errorf("go.mod requires %s %s; README.md's Versioning says kube-scheduler v1.%s, whose modules are %s", path, version, m[1], staging)
		}
		if !strings.Contains(section, "`"+path+"`") {
			t.Errorf("README.md's Versioning does not name %s, which go.mod requires", path)
		}
	}
	if found == 0 {
		t.Error("go.mod requires no k8s.io module directly")
	}
	if !strings.Contains(section, "all "+staging) {
		t.Errorf("README.md's Versioning does not say the modules are all %s", staging)
	}
}

// mdLink is one Markdown link or image of a document.
type mdLink struct {
	line         int
	text, target string
}

// linkPattern matches [text](target) and ![alt](target), with an optional
// "title" after the target.
var linkPattern = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan matches an inline code span, in which brackets are not links.
var codeSpan = regexp.MustCompile("`[^`]*`")

// markdownLinks returns the links of a Markdown document, outside fenced
// code blocks and inline code.
func markdownLinks(text string) []mdLink {
	var links []mdLink
	inCode := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		line = codeSpan.ReplaceAllStringFunc(line, func(s string) string {
			// Keep a link whose text is code ([`x`](y)) a link.
			return strings.Trim(s, "`")
		})
		for _, m := range linkPattern.FindAllStringSubmatch(line, -1) {
			links = append(links, mdLink{line: i + 1, text: m[1], target: m[2]})
		}
	}
	return links
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces
// to '-', every other character but letters, digits, '-' and '_'
// dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownAnchors returns the anchors of a Markdown document's headings,
// outside fenced code blocks; a repeated anchor gets -1, -2, ... as on
// GitHub.
func markdownAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(heading, " ") {
			continue
		}
		a := githubAnchor(heading)
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// checkLink returns what is wrong with the relative link target of the
// document at path from, or "" when it resolves: the file it names
// exists, relative to from, and its #anchor, on a Markdown file, is one
// of that file's headings.
func checkLink(from, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	path := from
	if file != "" {
		path = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
		if _, err := os.Stat(path); err != nil {
			return "no such file " + filepath.ToSlash(path)
		}
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if !markdownAnchors(string(data))[anchor] {
		return "no heading of " + filepath.ToSlash(path) + " makes the anchor #" + anchor
	}
	return ""
}

func TestTheLinkCheckerMakesGitHubsAnchors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ heading, want string }{
		{"Run every test", "run-every-test"},
		{"Why is my pod Pending? `kubesched explain`", "why-is-my-pod-pending-kubesched-explain"},
		{"examples/controller: a working scheduler", "examplescontroller-a-working-scheduler"},
		{"Reserving, and what happens when nothing fits", "reserving-and-what-happens-when-nothing-fits"},
		{"Older releases, out of process", "older-releases-out-of-process"},
		{"The cache: `cache`", "the-cache-cache"},
		{"snake_case and dashes-kept", "snake_case-and-dashes-kept"},
	} {
		if got := githubAnchor(tc.heading); got != tc.want {
			t.Errorf("githubAnchor(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
	anchors := markdownAnchors("# A\n\n## Twice\n\n```\n# not a heading\n```\n\n## Twice\n")
	for _, want := range []string{"a", "twice", "twice-1"} {
		if !anchors[want] {
			t.Errorf("markdownAnchors: no %q in %v", want, anchors)
		}
	}
	if anchors["not-a-heading"] {
		t.Error("markdownAnchors took a line of a code block for a heading")
	}
}

// TestEveryRelativeLinkInTheDocsResolves: every link of README.md and
// docs/*.md that is not a URL names a file that exists and, with an
// #anchor into a Markdown file, a heading of it.
func TestEveryRelativeLinkInTheDocsResolves(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"README.md"}, docs...)
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			if strings.HasPrefix(l.target, "http://") || strings.HasPrefix(l.target, "https://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			if msg := checkLink(file, l.target); msg != "" {
				t.Errorf("%s:%d: [%s](%s): %s", filepath.ToSlash(file), l.line, l.text, l.target, msg)
			}
		}
	}
	if checked == 0 {
		t.Error("found no relative link in README.md and docs/*.md")
	}
}

// TestCINamesEverySkippedTest runs .ci/run's test wrapper on a module
// whose tests skip: the log must leave out the lines of tests that ran
// and passed, and end with each skipped test and its reason, so that a
// skip in CI is never silent.
func TestCINamesEverySkippedTest(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("no bash: %v", err)
	}
	data, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	script := string(data)
	start, end := strings.Index(script, "testlog=$(mktemp)"), strings.Index(script, "trap skipped EXIT")
	if start < 0 || end < start {
		t.Fatal(".ci/run has no test wrapper from \"testlog=$(mktemp)\" to \"trap skipped EXIT\"")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module skipping\n\ngo 1.24\n",
		"a_test.go": `package skipping

import "testing"

func TestPasses(t *testing.T) { t.Log("a line of a passing test") }

func TestSkipsAlone(t *testing.T) { t.Skip("no browser here") }

func TestSkipsInParallel(t *testing.T) {
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if name == "second" {
				t.Skip("the second one skips")
			}
		})
	}
}
`,
		"wrapper.sh": script[start : end+len("trap skipped EXIT")],
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-c", `set -euo pipefail; source ./wrapper.sh; (go test -count=1 ./...) || echo "the tests failed"`)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the wrapper failed: %v\n%s", err, out)
	}
	log := string(out)
	for _, want := range []string{
		"SKIP TestSkipsAlone: a_test.go:7: no browser here\n",
		"SKIP TestSkipsInParallel/second: a_test.go:14: the second one skips\n",
		"2 skipped\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	for _, unwanted := range []string{"=== RUN", "--- PASS", "the tests failed"} {
		if strings.Contains(log, unwanted) {
			t.Errorf("the log has %q:\n%s", unwanted, log)
		}
	}
}
