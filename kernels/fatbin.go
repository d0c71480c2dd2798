package kernels

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// The committed fatbin, built by `make fatbin` from goldfhe.cu (which
// #includes every other .cuh here), and the hash of the sources it was
// built from. Both files are empty until the first build.
var (
	//go:embed goldfhe.fatbin
	embeddedFatbin []byte
	//go:embed goldfhe.fatbin.sha256
	embeddedSourceHash string
)

// FatbinEnv names the environment variable that, when set, makes
// LoadLibrary load that fatbin file instead of the embedded one (for
// developing kernels: build with nvcc, point at the result, run the tests).
const FatbinEnv = "GOLDFHE_FATBIN"

// recordedSourceHash returns the SHA-256 recorded in goldfhe.fatbin.sha256
// when the embedded fatbin was built ("" if it was never built).
func recordedSourceHash() string { return strings.TrimSpace(embeddedSourceHash) }

// isSource reports whether a file name is one of the kernel sources the
// fatbin is built from: every *.cu and *.cuh file of this directory.
func isSource(name string) bool {
	return strings.HasSuffix(name, ".cu") || strings.HasSuffix(name, ".cuh")
}

// sourceHash computes the hash goldfhe.fatbin.sha256 records, over the
// kernel sources in fsys (the kernels directory):
//
//  1. take every regular file at the top of fsys whose name ends in ".cu"
//     or ".cuh", sorted by name bytewise (LC_ALL=C order);
//  2. for each, write the line "<hex SHA-256 of its bytes>  <name>\n"
//     (two spaces: exactly what `sha256sum name…` prints);
//  3. the result is the lowercase hex SHA-256 of those lines.
//
// kernels/srchash.sh computes the same in the shell for `make fatbin`.
func sourceHash(fsys fs.FS) (string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && isSource(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // Go string order is bytewise
	if len(names) == 0 {
		return "", fmt.Errorf("kernels: no .cu/.cuh sources found")
	}
	manifest := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(manifest, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return hex.EncodeToString(manifest.Sum(nil)), nil
}

// fatbinImage returns the kernel image to load and a description of where
// it came from: the file named by GOLDFHE_FATBIN if set, else the embedded
// fatbin. Whether the image is whole, LoadModule checks (checkImage).
func fatbinImage(getenv func(string) string) (image []byte, source string, err error) {
	if p := getenv(FatbinEnv); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s=%s: %v", ErrNoFatbin, FatbinEnv, p, err)
		}
		if len(b) == 0 {
			return nil, "", fmt.Errorf("%w: %s=%s is empty", ErrNoFatbin, FatbinEnv, p)
		}
		return b, FatbinEnv + "=" + p, nil
	}
	if len(embeddedFatbin) == 0 {
		return nil, "", fmt.Errorf("%w: the embedded kernels/goldfhe.fatbin is empty (not built yet): "+
			"run `make fatbin` on a host with nvcc and commit it, or set %s to a fatbin file", ErrNoFatbin, FatbinEnv)
	}
	h := recordedSourceHash()
	if len(h) > 12 {
		h = h[:12]
	}
	return embeddedFatbin, "embedded goldfhe.fatbin (sources sha256 " + h + "…)", nil
}
