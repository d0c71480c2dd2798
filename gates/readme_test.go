package gates_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeFirstProgramIsExample: the README says its first program is
// Example in this file's package, compiled and run by go test; this keeps
// that true. The README's program must compile (type-checked here, its
// imports included), and its body must match Example's line for line, but
// for the README's "// true" notes where Example has its Output block.
func TestReadmeFirstProgramIsExample(t *testing.T) {
	section, src, example := readmeBlock(t, "## A first program")
	// It compiles: type-checked from source, imports included (an unused
	// or missing one is an error).
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "README.md", src, 0)
	require.NoError(t, err, "README's first program")
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("main", fset, []*ast.File{file}, nil); err != nil {
		t.Fatalf("README's first program does not compile: %v", err)
	}
	got := body(t, "README.md", section, "func main() {\n")
	want := body(t, "example_test.go", example, "func Example() {\n")
	note := regexp.MustCompile(`\s+// (true|false)$`)
	var g, w []string
	for _, l := range got {
		g = append(g, note.ReplaceAllString(l, ""))
	}
	for _, l := range want {
		if strings.HasPrefix(strings.TrimSpace(l), "// Output:") {
			break
		}
		w = append(w, l)
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		for k := range max(len(g), len(w)) {
			var a, b string
			if k < len(g) {
				a = g[k]
			}
			if k < len(w) {
				b = w[k]
			}
			if a != b {
				t.Fatalf("README's first program and Example differ from body line %d:\nREADME:  %q\nExample: %q", k+1, a, b)
			}
		}
	}
}

// readmeBlock returns the README from its heading on, the text of the
// first go code block after that heading, and example_test.go.
func readmeBlock(t *testing.T, heading string) (section, src, example string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	ex, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	r := string(readme)
	i := strings.Index(r, heading)
	if i < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	section = r[i:]
	j := strings.Index(section, "```go\n")
	if j < 0 {
		t.Fatalf("README's %q has no go block", heading)
	}
	src = section[j+len("```go\n"):]
	k := strings.Index(src, "```")
	if k < 0 {
		t.Fatalf("README's %q has an unclosed go block", heading)
	}
	return section, src[:k], string(ex)
}

// body returns the lines of the function that starts at the first start in
// s, up to its closing brace at column 0.
func body(t *testing.T, name, s, start string) []string {
	t.Helper()
	i := strings.Index(s, start)
	if i < 0 {
		t.Fatalf("%s: no %q", name, start)
	}
	s = s[i+len(start):]
	j := strings.Index(s, "\n}\n")
	if j < 0 {
		t.Fatalf("%s: %q has no closing brace", name, start)
	}
	return strings.Split(s[:j], "\n")
}

// TestReadmeBuilderIsExample: the Builder code of the README's "Circuits
// of your own" is the first lines of ExampleBuilder, so that it compiles
// and runs.
func TestReadmeBuilderIsExample(t *testing.T) {
	_, src, example := readmeBlock(t, "### Circuits of your own")
	got := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	want := body(t, "example_test.go", example, "func ExampleBuilder() {\n")
	if len(want) < len(got) {
		t.Fatalf("README's Builder code has %d lines, ExampleBuilder %d", len(got), len(want))
	}
	for k, l := range got {
		if w := strings.TrimPrefix(want[k], "\t"); l != w {
			t.Fatalf("README's Builder code and ExampleBuilder differ at line %d:\nREADME:  %q\nExample: %q", k+1, l, w)
		}
	}
}
