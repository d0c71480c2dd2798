//go:build race

package tfhe

const raceEnabled = true
