package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// sourceDir returns the directory holding the kernel sources: "." under
// go test, "kernels" when a compiled test binary runs from the repository
// root (as on the GPU host).
func sourceDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{".", "kernels"} {
		if _, err := os.Stat(filepath.Join(d, "goldfhe.cu")); err == nil {
			return d
		}
	}
	t.Skip("kernels: sources not found in . or ./kernels (test binary run from elsewhere)")
	return ""
}

// TestFatbinSourceHash fails when the kernel sources changed after the
// committed fatbin was built from them.
func TestFatbinSourceHash(t *testing.T) {
	dir := sourceDir(t)
	got, err := sourceHash(os.DirFS(dir))
	require.NoError(t, err)
	recorded := recordedSourceHash()
	if len(embeddedFatbin) == 0 && recorded == "" {
		t.Skipf("kernels: no fatbin built yet (goldfhe.fatbin is empty); sources hash to %s", got)
	}
	if recorded == "" {
		t.Fatal("goldfhe.fatbin is not empty but goldfhe.fatbin.sha256 is: run `make fatbin` and commit both")
	}
	if got != recorded {
		t.Fatalf("kernel sources changed since goldfhe.fatbin was built (recorded sources sha256 %s, now %s): "+
			"run `make fatbin` on a host with nvcc and commit goldfhe.fatbin and goldfhe.fatbin.sha256", recorded, got)
	}
	if binary.LittleEndian.Uint32(embeddedFatbin) != fatbinMagic {
		t.Fatalf("goldfhe.fatbin does not start with the fatbin magic %#x", uint32(fatbinMagic))
	}
	// the file on disk is what is embedded
	disk, err := os.ReadFile(filepath.Join(dir, "goldfhe.fatbin.sha256"))
	require.NoError(t, err)
	if strings.TrimSpace(string(disk)) != recorded || len(strings.Fields(string(disk))) != 1 {
		t.Errorf("goldfhe.fatbin.sha256 holds %q, want one line: the hex hash", disk)
	}
}

// TestSourceHashDefinition pins the definition of the source hash.
func TestSourceHashDefinition(t *testing.T) {
	fsys := fstest.MapFS{
		"b.cuh":       {Data: []byte("// b\n")},
		"a.cu":        {Data: []byte("// a\n")},
		"Z.cu":        {Data: []byte("// Z\n")}, // bytewise: upper case first
		"x.go":        {Data: []byte("package x")},
		"a.cu.orig":   {Data: []byte("ignored")},
		"sub/c.cu":    {Data: []byte("not at the top")},
		"goldfhe.bin": {Data: []byte("ignored")},
	}
	var manifest strings.Builder
	for _, n := range []string{"Z.cu", "a.cu", "b.cuh"} {
		sum := sha256.Sum256(fsys[n].Data)
		fmt.Fprintf(&manifest, "%x  %s\n", sum, n)
	}
	sum := sha256.Sum256([]byte(manifest.String()))
	got, err := sourceHash(fsys)
	require.NoError(t, err)
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("sourceHash = %s, want %s", got, want)
	}
	if _, err := sourceHash(fstest.MapFS{"x.go": {}}); err == nil {
		t.Error("sourceHash of no sources succeeded")
	}
}

// TestSourceHashScript checks that srchash.sh (used by make fatbin)
// computes what sourceHash does.
func TestSourceHashScript(t *testing.T) {
	for _, tool := range []string{"sh", "sha256sum", "sort", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: cannot run srchash.sh", tool)
		}
	}
	dir := sourceDir(t)
	out, err := exec.Command("sh", filepath.Join(dir, "srchash.sh")).Output()
	require.NoError(t, err)
	want, err := sourceHash(os.DirFS(dir))
	require.NoError(t, err)
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("srchash.sh prints %s, sourceHash gives %s", got, want)
	}
}

func TestFatbinImage(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "dev.fatbin")
	require.NoError(t, os.WriteFile(dev, []byte("image"), 0o644))
	empty := filepath.Join(dir, "empty.fatbin")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))

	img, src, err := fatbinImage(func(k string) string { return map[string]string{FatbinEnv: dev}[k] })
	require.NoError(t, err)
	if string(img) != "image" || src != "GOLDFHE_FATBIN="+dev {
		t.Errorf("override: %q from %q", img, src)
	}
	for _, p := range []string{empty, filepath.Join(dir, "missing")} {
		_, _, err = fatbinImage(func(k string) string { return map[string]string{FatbinEnv: p}[k] })
		require.ErrorIs(t, err, ErrNoFatbin)
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %s", err, p)
		}
	}
	img, src, err = fatbinImage(func(string) string { return "" })
	if len(embeddedFatbin) == 0 {
		require.ErrorIs(t, err, ErrNoFatbin)
		if !strings.Contains(err.Error(), "make fatbin") || !strings.Contains(err.Error(), FatbinEnv) {
			t.Errorf("error %q does not say how to get a fatbin", err)
		}
		return
	}
	require.NoError(t, err)
	if len(img) != len(embeddedFatbin) || !strings.HasPrefix(src, "embedded goldfhe.fatbin (sources sha256 ") {
		t.Errorf("embedded: %d bytes from %q", len(img), src)
	}
}

func TestLoadModuleErrors(t *testing.T) {
	g, c, _ := newFake(t)
	_, err := c.LoadModule(nil)
	require.ErrorIs(t, err, ErrNoFatbin)
	_, err = c.LoadModule([]byte("not a fatbin"))
	require.ErrorIs(t, err, ErrBadImage)
	if !strings.Contains(err.Error(), "cuModuleLoadData: CUDA_ERROR_NO_BINARY_FOR_GPU") {
		t.Errorf("error %q", err)
	}
	// A device with only PTX for it (a GPU newer than the fatbin's SASS)
	// and the JIT unusable: the image is not loadable here (ErrBadImage,
	// as LoadLibrary's doc promises), not an unclassified error.
	for _, code := range []Result{221, 223} { // JIT compiler not found, JIT disabled
		g.fail[symModuleLoadFatBinary] = code
		_, err = c.LoadModule(fakeImage)
		require.ErrorIs(t, err, ErrBadImage)
	}
	m, err := c.LoadModule(fakeImage)
	require.NoError(t, err)
	_, err = m.Function("no_such_kernel")
	if err == nil || !strings.Contains(err.Error(), "cuModuleGetFunction(no_such_kernel): CUDA_ERROR_NOT_FOUND") {
		t.Errorf("missing function: %v", err)
	}
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	_, err = m.Function("goldfhe_mul")
	require.ErrorIs(t, err, ErrClosed)
}
