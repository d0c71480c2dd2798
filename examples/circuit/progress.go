package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/gates"
)

// progress draws a progress bar on stderr: redrawn in place on a terminal,
// a line every 10% otherwise.
type progress struct {
	total, done int
	start       time.Time
	tty         bool
	lastTenth   int
}

func newProgress(totalBootstraps int) *progress {
	st, err := os.Stderr.Stat()
	return &progress{total: max(totalBootstraps, 1), start: time.Now(), tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) update(s gates.LevelStats) {
	p.done += s.Bootstraps
	frac := float64(p.done) / float64(p.total)
	el := time.Since(p.start)
	eta := "?"
	if p.done > 0 {
		eta = (time.Duration(float64(el)/frac) - el).Round(time.Second).String()
	}
	const width = 30
	bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(".", width-int(frac*width))
	line := fmt.Sprintf("eval     [%s] %3.0f%%  level %d/%d  %d/%d bootstraps  %v elapsed, ETA %s",
		bar, 100*frac, s.Level, s.Levels-1, p.done, p.total, el.Round(time.Second), eta)
	if p.tty {
		fmt.Fprintf(os.Stderr, "\r%s\x1b[K", line)
		return
	}
	if tenth := int(10 * frac); tenth > p.lastTenth || s.Level == s.Levels-1 {
		p.lastTenth = tenth
		fmt.Fprintln(os.Stderr, line)
	}
}

func (p *progress) finish() {
	if p.tty {
		fmt.Fprintln(os.Stderr)
	}
}
