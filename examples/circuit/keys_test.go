package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestKeysNeverOverwritten: a -keys folder that holds one key file and not
// the other is an error, and the key file in it is left as it was; new
// keys are only ever written into files that do not exist.
func TestKeysNeverOverwritten(t *testing.T) {
	for _, lone := range []string{secretKeyFile, cloudKeyFile} {
		t.Run(lone, func(t *testing.T) {
			dir := t.TempDir()
			old := []byte("a key made earlier")
			require.NoError(t, os.WriteFile(filepath.Join(dir, lone), old, 0o600))
			_, _, err := keys(tfhe.TFHELib128, "", dir, 0)
			if err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "holds "+lone) {
				t.Fatalf("keys with only %s: %v, want an error naming it", lone, err)
			}
			if got, err := os.ReadFile(filepath.Join(dir, lone)); err != nil || !bytes.Equal(got, old) {
				t.Fatalf("%s after keys: %q, %v; want it unchanged", lone, got, err)
			}
		})
	}
	t.Run("writeNew", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), secretKeyFile)
		require.NoError(t, writeNew(path, []byte("first"), 0o600))
		if err := writeNew(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
			t.Errorf("writeNew over an existing file: %v, want fs.ErrExist", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "first" {
			t.Errorf("the file holds %q after a refused write, want %q", got, "first")
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
		}
	})
	t.Run("neither", func(t *testing.T) {
		if _, _, err := loadKeys(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("loadKeys of an empty folder: %v, want fs.ErrNotExist (new keys are made)", err)
		}
	})
}

// TestKeysMismatchedPair: a -keys folder whose cloud key comes from
// another key generation is refused when loaded, before any evaluation
// (whose outputs would decrypt to noise).
func TestKeysMismatchedPair(t *testing.T) {
	p := tfhe.MustNewParams(tfhe.ParamsLiteral{
		Name: "toy", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
		BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
		LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
	})
	a, b := t.TempDir(), t.TempDir()
	for i, dir := range []string{a, b} {
		seed := strings.Repeat(string("12"[i]), 64)
		if _, _, err := keys(p, seed, dir, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := keys(p, "", a, 0); err != nil {
		t.Fatalf("loading a's own pair: %v", err)
	}
	other, err := os.ReadFile(filepath.Join(b, cloudKeyFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, cloudKeyFile), other, 0o644))
	if _, _, err := keys(p, "", a, 0); !errors.Is(err, tfhe.ErrKeyMismatch) {
		t.Errorf("loading a's secret key with b's cloud key: %v, want tfhe.ErrKeyMismatch", err)
	}
}

// TestReadSeed: -seed takes 64 hex digits or @FILE holding them (white
// space around them ignored), the same seed either way, and nothing else.
func TestReadSeed(t *testing.T) {
	hexSeed := strings.Repeat("0123456789abcdef", 4)
	want, err := readSeed(hexSeed)
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "seed")
	require.NoError(t, os.WriteFile(name, []byte("  "+hexSeed+"\n"), 0o600))
	if got, err := readSeed("@" + name); err != nil || got != want {
		t.Errorf("readSeed(@file) = %x, %v; want %x", got, err, want)
	}
	for _, bad := range []string{"abc", hexSeed + "00", "@" + name + ".missing", "@", strings.Repeat("0", 64)} {
		if _, err := readSeed(bad); err == nil {
			t.Errorf("readSeed(%q): no error", bad)
		}
	}
}

// TestSaveKeysBothOrNeither: saveKeys puts both key files in place whole,
// or neither: where the cloud key cannot be placed (a file already has its
// name), the secret key it placed is removed, and no temporary file is left
// either way. (A save interrupted by Ctrl-C, or a full disk, used to leave
// a truncated cloud.key or a lone secret.key, which every later run
// refused.)
func TestSaveKeysBothOrNeither(t *testing.T) {
	sk, err := tfhe.GenerateSecretKey(tfhe.CuFHE80)
	require.NoError(t, err)
	ck, err := tfhe.GenerateCloudKey(sk)
	require.NoError(t, err)
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}
	dir := t.TempDir()
	require.NoError(t, saveKeys(dir, sk, ck))
	if got := names(dir); len(got) != 2 || got[0] != cloudKeyFile || got[1] != secretKeyFile {
		t.Errorf("after a save: %v, want the two key files only", got)
	}
	if _, _, err := loadKeys(dir); err != nil {
		t.Errorf("loading the saved keys: %v", err)
	}
	blocked := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(blocked, cloudKeyFile), []byte("in the way"), 0o600))
	if err := saveKeys(blocked, sk, ck); !errors.Is(err, fs.ErrExist) {
		t.Errorf("save over an existing cloud.key: %v, want fs.ErrExist", err)
	}
	if got := names(blocked); len(got) != 1 || got[0] != cloudKeyFile {
		t.Errorf("after a refused save: %v, want only the cloud.key that was there", got)
	}
}
