package torus

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestSamplerFormatRedacts: no fmt verb prints a Sampler's seed or state.
func TestSamplerFormatRedacts(t *testing.T) {
	seed := DeriveSeed([SeedSize]byte{}, "torus-test/format", 0)
	s := NewSamplerFromSeed(seed)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		got := fmt.Sprintf(verb, s)
		if got != "torus.Sampler(redacted)" {
			t.Errorf("Sprintf(%q, sampler) = %q, want the redacted name", verb, got)
		}
	}
	// The value, not only the pointer.
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		if got := fmt.Sprintf(verb, *s); got != "torus.Sampler(redacted)" {
			t.Errorf("Sprintf(%q, *sampler) = %q", verb, got)
		}
	}
	// Inside a struct, as a caller's logging would print it.
	got := fmt.Sprintf("%+v", struct{ S *Sampler }{s})
	if strings.Contains(got, hex.EncodeToString(seed[:4])) || strings.Contains(got, fmt.Sprint(seed[0])+" ") || !strings.Contains(got, "redacted") {
		t.Errorf("a struct holding a Sampler prints %q", got)
	}
	// Held by value in an unexported field, where fmt reads the fields by
	// reflection and calls no method of the Sampler.
	type holder struct{ s Sampler }
	seedDec := strings.Trim(fmt.Sprint(seed[:8]), "[]")                              // %v, %+v
	seedHex := fmt.Sprintf("%#x, %#x, %#x, %#x", seed[0], seed[1], seed[2], seed[3]) // %#v
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		if got := fmt.Sprintf(verb, holder{*s}); strings.Contains(got, seedDec) || strings.Contains(got, seedHex) {
			t.Errorf("Sprintf(%q) of a struct holding a Sampler by value prints its seed: %.200q", verb, got)
		}
	}
}

// TestZeroSamplerDerive: Derive of a zero Sampler panics with its own
// message, as its doc says, rather than dereference the missing seed (or,
// as before the seed moved behind a pointer, derive predictable streams
// from the all-zero seed).
func TestZeroSamplerDerive(t *testing.T) {
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.Contains(s, "zero Sampler") {
			t.Errorf("Derive of a zero Sampler: recovered %v, want its panic", r)
		}
	}()
	var s Sampler
	s.Derive("label", 0)
}
