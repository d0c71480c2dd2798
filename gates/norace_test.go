//go:build !race

package gates_test

const raceEnabled = false
