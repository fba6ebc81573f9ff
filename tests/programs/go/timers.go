// Timers and select: a 1-unit timer against a 2-unit time.After, an
// AfterFunc, a ticker, and a select that times out on time.After. Prints each
// event with its elapsed time in units (default unit 1s), rounded to 0.001.
// Usage: timers [unit=1s]
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	unit := time.Second
	if len(os.Args) > 1 {
		d, err := time.ParseDuration(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		unit = d
	}
	start := time.Now()
	at := func() string { return fmt.Sprintf("%.3f", time.Since(start).Seconds()/unit.Seconds()) }

	timer := time.NewTimer(unit)
	select {
	case <-timer.C:
		fmt.Printf("timer won at %s\n", at())
	case <-time.After(2 * unit):
		fmt.Printf("after won at %s\n", at())
	}

	fired := make(chan string)
	time.AfterFunc(unit/2, func() { fired <- at() })
	fmt.Printf("afterfunc ran at %s\n", <-fired)

	ticker := time.NewTicker(unit / 10)
	for i := 1; i <= 3; i++ {
		<-ticker.C
		fmt.Printf("tick %d at %s\n", i, at())
	}
	ticker.Stop()

	never := make(chan struct{})
	select {
	case <-never:
		fmt.Println("unreachable")
	case <-time.After(3 * unit):
		fmt.Printf("timeout at %s\n", at())
	}
}
