package benchio

import "testing"

func TestSig(t *testing.T) {
	for x, want := range map[float64]string{74.77: "74.77", 0.5: "0.5000", 1539.2: "1539", 123456: "123456", 0: "0"} {
		if got := Sig(x); got != want {
			t.Errorf("Sig(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	ticks := LogTicks{}.Ticks(3, 250)
	labels := map[float64]string{}
	for _, tk := range ticks {
		labels[tk.Value] = tk.Label
	}
	if labels[10] != "10" || labels[100] != "100" || labels[20] != "" || len(ticks) != 7+9+2 {
		t.Errorf("ticks %v", ticks)
	}
	if len((LogTicks{}).Ticks(0, 1)) != 0 {
		t.Error("ticks for a non-positive range")
	}
	if bt := BatchTicks([]int{1, 64}); len(bt) != 2 || bt[1].Label != "64" {
		t.Errorf("BatchTicks: %v", bt)
	}
	if CPUModel() == "" {
		t.Error("empty CPU model")
	}
}
