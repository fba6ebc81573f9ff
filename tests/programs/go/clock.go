// time.Now and time.Since around a long time.Sleep (default one hour).
// Usage: clock [sleep=1h]
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	sleep := time.Hour
	if len(os.Args) > 1 {
		d, err := time.ParseDuration(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sleep = d
	}
	start := time.Now()
	fmt.Printf("now %s unix %d\n", start.UTC().Format(time.RFC3339Nano), start.Unix())
	time.Sleep(sleep)
	fmt.Printf("slept %.6f\n", time.Since(start).Seconds())
	fmt.Printf("now %s\n", time.Now().UTC().Format(time.RFC3339))
}
