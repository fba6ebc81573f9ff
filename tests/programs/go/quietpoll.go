// A thread polls an epoll instance with a zero timeout in a loop, its
// simulated listening socket never ready, until a goroutine on another
// thread sets a flag. Under faultline each poll is answered in place, and
// every 64th of a thread is a scheduling point, so the other thread gets
// its turn (without it, only the watchdog would stop the loop). Prints
// how many polls the loop made.
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
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	must(err, "socket")
	addr := syscall.SockaddrInet4{Port: 7100, Addr: [4]byte{127, 0, 0, 1}}
	must(syscall.Bind(fd, &addr), "bind")
	must(syscall.Listen(fd, 8), "listen")
	epfd, err := syscall.EpollCreate1(0)
	must(err, "epoll_create1")
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	must(syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev), "epoll_ctl")

	var done int32
	go func() { atomic.StoreInt32(&done, 1) }()
	events := make([]syscall.EpollEvent, 8)
	polls := 0
	for atomic.LoadInt32(&done) == 0 {
		n, err := syscall.EpollWait(epfd, events, 0)
		must(err, "epoll_wait")
		if n != 0 {
			fmt.Fprintln(os.Stderr, "a connection nobody made")
			os.Exit(1)
		}
		polls++
	}
	fmt.Printf("polls %d\n", polls)
}
