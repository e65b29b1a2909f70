package kubesched_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
