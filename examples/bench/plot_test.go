package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// fakeResult is a case of set on engine measured at batches, gates/s
// rising with the batch.
func fakeResult(engine string, set tfhe.Params, variant string, batches ...int) caseResult {
	r := caseResult{c: benchCase{engine: engine, set: set, variant: variantSpec{name: variant}}, variant: variant}
	for _, b := range batches {
		r.ms = append(r.ms, measurement{batch: b, median: time.Duration(b+100) * time.Microsecond, runs: 1})
	}
	return r
}

// TestThroughputPanels checks that the throughput plot has one panel per
// measured set, in the order the sets first appear, on common axes, and
// that the image holds them one above the other.
func TestThroughputPanels(t *testing.T) {
	rs := []caseResult{
		fakeResult(engGPU, tfhe.TFHELib128, vGrouped3, 1, 16, 1024),
		fakeResult(engGPU, tfhe.CuFHE80, vDefault, 1, 64),
		fakeResult(engCPU, tfhe.TFHELib128, "hybrid/32x32", 1, 4),
		{c: benchCase{engine: engGPU, set: tfhe.TFHErsDefault, variant: variantSpec{name: vDefault}}, err: os.ErrNotExist}, // failed: no panel
	}
	m := machine{cpuModel: "test CPU"}
	ps, err := throughputPlots(rs, m)
	require.NoError(t, err)
	if len(ps) != 2 {
		t.Fatalf("%d panels, want 2 (TFHELib128, CuFHE80)", len(ps))
	}
	for i, want := range []string{"TFHELib128", "CuFHE80"} {
		if got := ps[i].Title.Text; !strings.Contains(got, want) {
			t.Errorf("panel %d title %q, want %s", i, got, want)
		}
		if ps[i].Y.Min != ps[0].Y.Min || ps[i].Y.Max != ps[0].Y.Max || ps[i].X.Min != ps[0].X.Min || ps[i].X.Max != ps[0].X.Max {
			t.Errorf("panel %d axes differ from panel 0's", i)
		}
	}

	out := benchio.Saver{Dir: t.TempDir()}
	writePlots(&out, m, rs)
	if len(out.Errs) > 0 || len(out.Written) != 2 {
		t.Fatalf("written %v, errors %v", out.Written, out.Errs)
	}
	f, err := os.Open(filepath.Join(out.Dir, fileGates))
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err)
	// Two panels of 10 x 7 inches each, at gonum's 96 dots per inch.
	if cfg.Width != 960 || cfg.Height != 2*672 {
		t.Errorf("image %dx%d, want 960x1344 (two panels)", cfg.Width, cfg.Height)
	}

	// Nothing measured: no plot, no error.
	none := benchio.Saver{Dir: t.TempDir()}
	if writePlots(&none, m, rs[3:]); len(none.Written) != 0 || len(none.Errs) != 0 {
		t.Errorf("nothing measured: written %v, errors %v", none.Written, none.Errs)
	}
}
