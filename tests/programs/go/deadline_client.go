// A TCP client with a read deadline, for partition scenarios: it connects to
// ADDR (retrying refused connections for up to -wait), then every -interval
// sends "ping I\n" and reads the echo, with the read deadline set to
// -deadline after the last successful exchange. Times are seconds since the
// program started, with microseconds.
//
// Prints "connected at t=T", then "pong I rtt=R" per exchange. When the
// deadline fires it prints "last ok at t=T" and "timeout at t=T" and exits 0;
// any other error is printed and exits 1.
// Usage: deadline_client [-interval 500ms] [-deadline 3s] [-wait 5s] HOST:PORT
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

func main() {
	interval := flag.Duration("interval", 500*time.Millisecond, "pause between exchanges")
	deadline := flag.Duration("deadline", 3*time.Second, "read deadline after the last good exchange")
	wait := flag.Duration("wait", 5*time.Second, "how long to retry refused connections")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: deadline_client [-interval D] [-deadline D] [-wait D] HOST:PORT")
		os.Exit(2)
	}
	start := time.Now()
	at := func(t time.Time) string { return fmt.Sprintf("%.6f", t.Sub(start).Seconds()) }

	conn, err := net.Dial("tcp", flag.Arg(0))
	for err != nil && errors.Is(err, syscall.ECONNREFUSED) && time.Since(start) < *wait {
		time.Sleep(10 * time.Millisecond)
		conn, err = net.Dial("tcp", flag.Arg(0))
	}
	if err != nil {
		fmt.Printf("dial: %v\n", err)
		os.Exit(1)
	}
	last := time.Now()
	fmt.Printf("connected at t=%s\n", at(last))
	reader := bufio.NewReader(conn)
	for i := 1; ; i++ {
		sent := time.Now()
		msg := fmt.Sprintf("ping %d\n", i)
		if _, err := conn.Write([]byte(msg)); err != nil {
			fmt.Printf("write: %v\n", err)
			os.Exit(1)
		}
		if err := conn.SetReadDeadline(last.Add(*deadline)); err != nil {
			fmt.Printf("set deadline: %v\n", err)
			os.Exit(1)
		}
		line, err := reader.ReadString('\n')
		now := time.Now()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			fmt.Printf("last ok at t=%s\n", at(last))
			fmt.Printf("timeout at t=%s\n", at(now))
			return
		}
		if err != nil {
			fmt.Printf("read: %v\n", err)
			os.Exit(1)
		}
		if line != msg {
			fmt.Printf("bad echo %q for %q\n", line, msg)
			os.Exit(1)
		}
		fmt.Printf("pong %d rtt=%.6f\n", i, now.Sub(sent).Seconds())
		last = now
		time.Sleep(*interval)
	}
}
