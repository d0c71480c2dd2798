package bootstrap

import "testing"

func TestParseUse(t *testing.T) {
	for in, want := range map[string]Use{"auto": UseAuto, "": UseAuto, "CPU": UseCPU, " gpu ": UseGPU} {
		got, err := ParseUse(in)
		if err != nil || got != want {
			t.Errorf("ParseUse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseUse("tpu"); err == nil {
		t.Error(`ParseUse("tpu"): no error`)
	}
}
