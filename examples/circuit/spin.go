package main

import (
	"fmt"
	"os"
	"time"
)

// spin runs f, showing the elapsed time on a terminal, then prints how long
// it took.
func spin[T any](what string, f func() (T, error)) (T, error) {
	st, err := os.Stdout.Stat()
	tty := err == nil && st.Mode()&os.ModeCharDevice != 0
	done := make(chan struct{})
	start := time.Now()
	if tty {
		go func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					fmt.Printf("\r%s … %v", what, time.Since(start).Round(100*time.Millisecond))
				}
			}
		}()
	}
	v, err := f()
	close(done)
	if tty {
		fmt.Print("\r")
	}
	fmt.Printf("%s … %v\n", what, time.Since(start).Round(time.Millisecond))
	return v, err
}
