// Package selfexec lets an example program's tests run the program itself:
// the test binary, started again with an environment variable set, runs
// main instead of the tests, so that a test can check the exit status and
// output of a whole command line. It is for tests only.
package selfexec

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Main is a test binary's TestMain: with env set to "1" it runs the
// program's main and exits 0 if main returns; otherwise it runs the tests.
func Main(m *testing.M, env string, main func()) {
	if os.Getenv(env) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run starts the test binary again with env set to "1" and args as the
// program's arguments, and returns its exit status and combined output.
// It fails t if the binary could not be started.
func Run(t testing.TB, env string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatal(err)
	return 0, ""
}
