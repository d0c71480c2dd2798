package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Key files in the -keys folder. The runner plays both roles, client and
// server, so it needs both keys; the secret key file is written 0600.
const (
	secretKeyFile = "secret.key"
	cloudKeyFile  = "cloud.key"
)

// setup loads or generates the keys (with bootstrapping-key grouping
// grouping, tfhe.WithGrouping; 0: 2 for new keys, any for loaded ones) and
// starts the engine use asks for (the GPU when one is usable, by default).
func setup(p tfhe.Params, seedHex, dir string, grouping int, opts bootstrap.Options) (*tfhe.SecretKey, *gates.Evaluator, func(), error) {
	start := time.Now()
	sk, ck, err := keys(p, seedHex, dir, grouping)
	if err != nil {
		return nil, nil, nil, err
	}
	eng, err := spin("engine   preparing the engine", func() (*bootstrap.Selected, error) {
		return bootstrap.New(ck, opts)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		eng.Close()
		return nil, nil, nil, err
	}
	fmt.Printf("         %s, %s, ready in %v\n         %s\n", p.Name(), eng.Name(), time.Since(start).Round(time.Millisecond), eng.Reason())
	return sk, ev, func() { eng.Close() }, nil
}

// keys returns the keys in dir if it holds them, and otherwise generates
// them (from seedHex if set) and saves them there when dir is set.
// seedHex is -seed's value: 64 hex digits, or @FILE holding them.
func keys(p tfhe.Params, seedHex, dir string, grouping int) (sk *tfhe.SecretKey, ck *tfhe.CloudKey, err error) {
	if dir != "" {
		sk, ck, err = loadKeys(dir)
		switch {
		case err == nil:
			if !sk.Params().Equal(p) {
				k, want := tfhe.DistinctNames(sk.Params(), p)
				return nil, nil, fmt.Errorf("the keys in %s are for %s, not %s: pass -params %s to use them, or another -keys folder for new keys", dir, k, want, sk.Params().Name())
			}
			if grouping != 0 && ck.Grouping() != grouping {
				return nil, nil, fmt.Errorf("the cloud key in %s has grouping %d, not %d: drop -grouping to use it, or pass another -keys folder for new keys", dir, ck.Grouping(), grouping)
			}
			fmt.Printf("keys     loaded from %s\n", dir)
			if seedHex != "" {
				fmt.Printf("         (-seed unused: it only seeds new keys)\n")
			}
			return sk, ck, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, err
		}
	}
	var seed *[torus.SeedSize]byte
	if seedHex != "" {
		s, err := readSeed(seedHex)
		if err != nil {
			return nil, nil, err
		}
		seed = &s
	}
	if seed != nil {
		sk, err = tfhe.GenerateSecretKeyFromSeed(p, torus.DeriveSeed(*seed, "examples/circuit/sk", 0))
	} else {
		sk, err = tfhe.GenerateSecretKey(p)
	}
	if err != nil {
		return nil, nil, err
	}
	if grouping == 0 {
		grouping = 2 // the faster key; README "Grouped bootstrapping keys"
	}
	ck, err = spin(fmt.Sprintf("keys     generating the cloud key (grouping %d)", grouping), func() (*tfhe.CloudKey, error) {
		if seed != nil {
			return tfhe.GenerateCloudKeyFromSeed(sk, torus.DeriveSeed(*seed, "examples/circuit/ck", 0), tfhe.WithGrouping(grouping))
		}
		return tfhe.GenerateCloudKey(sk, tfhe.WithGrouping(grouping))
	})
	if err != nil {
		return nil, nil, err
	}
	if dir != "" {
		if err := saveKeys(dir, sk, ck); err != nil {
			return nil, nil, err
		}
		fmt.Printf("keys     saved in %s (%s is secret)\n", dir, secretKeyFile)
	}
	return sk, ck, nil
}

// loadKeys reads both key files; an fs.ErrNotExist error means neither is
// there. One without the other is an error that does not match
// fs.ErrNotExist, so that new keys are never written over a lone key
// (ciphertexts made under a secret key are lost with it).
func loadKeys(dir string) (*tfhe.SecretKey, *tfhe.CloudKey, error) {
	skData, err1 := os.ReadFile(filepath.Join(dir, secretKeyFile))
	ckData, err2 := os.ReadFile(filepath.Join(dir, cloudKeyFile))
	missing1, missing2 := errors.Is(err1, fs.ErrNotExist), errors.Is(err2, fs.ErrNotExist)
	switch {
	case missing1 && missing2:
		return nil, nil, fs.ErrNotExist
	case missing1 != missing2:
		have, lack := secretKeyFile, cloudKeyFile
		if missing1 {
			have, lack = cloudKeyFile, secretKeyFile
		}
		return nil, nil, fmt.Errorf("%s holds %s but no %s: restore it, or use another -keys folder (new keys are not written over a key)", dir, have, lack)
	case err1 != nil:
		return nil, nil, err1
	case err2 != nil:
		return nil, nil, err2
	}
	sk, ck := new(tfhe.SecretKey), new(tfhe.CloudKey)
	if err := sk.UnmarshalBinary(skData); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, secretKeyFile), err)
	}
	if err := ck.UnmarshalBinary(ckData); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, cloudKeyFile), err)
	}
	if !ck.Params().Equal(sk.Params()) {
		s, c := tfhe.DistinctNames(sk.Params(), ck.Params())
		return nil, nil, fmt.Errorf("%s: the secret key is for %s, the cloud key for %s", dir, s, c)
	}
	// Before any evaluation, whose outputs would decrypt to noise.
	if err := sk.CheckCloudKey(ck); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return sk, ck, nil
}

// saveKeys writes both key files or neither under their names: each is
// written whole to a hidden temporary file first, and only then put in
// place, so that an interrupted or failed save (Ctrl-C, a full disk) never
// leaves a truncated key or a lone one, which would break the folder for
// every later run. A temporary file an interrupt leaves is named
// .<key>.partial-*.
func saveKeys(dir string, sk *tfhe.SecretKey, ck *tfhe.CloudKey) error {
	skData, err := sk.MarshalBinary()
	if err != nil {
		return err
	}
	ckData, err := ck.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	skTmp, err := writeTemp(dir, secretKeyFile, skData, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(skTmp)
	ckTmp, err := writeTemp(dir, cloudKeyFile, ckData, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(ckTmp)
	skPath := filepath.Join(dir, secretKeyFile)
	if err := placeNew(skTmp, skPath); err != nil {
		return err
	}
	if err := placeNew(ckTmp, filepath.Join(dir, cloudKeyFile)); err != nil {
		os.Remove(skPath) // not a lone secret key
		return err
	}
	return nil
}

// writeNew writes a file that must not exist yet: a key file is never
// replaced. It is written whole under a temporary name first and then put
// in place, so that path never holds a part of data.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(filepath.Dir(path), filepath.Base(path), data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return placeNew(tmp, path)
}

// writeTemp writes data to a new hidden file in dir named after name, with
// mode perm, synced to the disk, and returns its path; it removes a file it
// could not finish.
func writeTemp(dir, name string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".partial-*")
	if err != nil {
		return "", err
	}
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return f.Name(), nil
}

// placeNew gives the finished file tmp the name path, which must not exist:
// a hard link does both at once; where the file system has none, a rename
// after a check.
func placeNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(path); serr == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return os.Rename(tmp, path)
}

// readSeed reads -seed: 64 hex digits, or "@FILE" for a file holding them
// (surrounding white space ignored), which keeps the seed out of the
// process list and the shell's history.
func readSeed(v string) ([torus.SeedSize]byte, error) {
	var seed [torus.SeedSize]byte
	text, from := v, "-seed"
	if name, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return seed, fmt.Errorf("-seed: %w", err)
		}
		text, from = strings.TrimSpace(string(b)), name
	}
	b, err := hex.DecodeString(text)
	if err != nil || len(b) != torus.SeedSize {
		return seed, fmt.Errorf("%s must hold %d hex digits", from, 2*torus.SeedSize)
	}
	if seed = [torus.SeedSize]byte(b); seed == ([torus.SeedSize]byte{}) {
		// The keys are derived from it (torus.DeriveSeed), so tfhe's own
		// check of a zero seed would not see it.
		return seed, fmt.Errorf("%s is all zeros: anybody could make the same keys", from)
	}
	return seed, nil
}
