// A thread reads a connected, non-blocking simulated socket with nothing
// to read in a loop, until a goroutine on another thread sets a flag;
// then the peer sends "ping" and the thread reads until it has it. Under
// faultline each read that fails with EAGAIN is answered in place (most
// by the runtime's stub), and every 64th of a thread is a scheduling
// point, so the other thread gets its turn and virtual time moves on until
// the data arrives. Prints how many empty reads the first loop made and
// what the second read.
package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
)

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	ln, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	must(err, "socket")
	addr := syscall.SockaddrInet4{Port: 7200, Addr: [4]byte{127, 0, 0, 1}}
	must(syscall.Bind(ln, &addr), "bind")
	must(syscall.Listen(ln, 8), "listen")
	client, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	must(err, "socket")
	must(syscall.Connect(client, &addr), "connect")
	conn, _, err := syscall.Accept(ln)
	must(err, "accept")
	must(syscall.SetNonblock(conn, true), "nonblock")

	var done int32
	go func() { atomic.StoreInt32(&done, 1) }()
	buf := make([]byte, 16)
	empty := 0
	for atomic.LoadInt32(&done) == 0 {
		n, err := syscall.Read(conn, buf)
		if err != syscall.EAGAIN {
			fmt.Fprintf(os.Stderr, "read %d, %v: data nobody sent\n", n, err)
			os.Exit(1)
		}
		empty++
	}
	fmt.Printf("empty reads %d\n", empty)

	_, err = syscall.Write(client, []byte("ping"))
	must(err, "write")
	got := []byte{}
	for len(got) < 4 {
		n, err := syscall.Read(conn, buf)
		if err == syscall.EAGAIN {
			continue
		}
		must(err, "read")
		if n == 0 {
			fmt.Fprintln(os.Stderr, "end of stream before the data")
			os.Exit(1)
		}
		got = append(got, buf[:n]...)
	}
	fmt.Printf("got %s\n", got)
}
