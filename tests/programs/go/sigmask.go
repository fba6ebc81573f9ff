// Signals while goroutines hand work to each other, and the signal masks
// a program and its child see. faultline may leave a thread's signals
// blocked between two of its runtime's calls; a signal sent meanwhile
// must still arrive, the program must read its own mask, and a child it
// starts must begin with nothing blocked. Prints what it saw; exits 1 if
// a stage fails.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// blocked is the calling thread's signal mask, as the kernel has it.
func blocked() string {
	var mask uint64
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 0, 0,
		uintptr(unsafe.Pointer(&mask)), 8, 0, 0)
	if errno != 0 {
		fmt.Println("rt_sigprocmask:", errno)
		os.Exit(1)
	}
	return fmt.Sprintf("%016x", mask)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		fmt.Println(blocked())
		return
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGUSR1)
	work := make(chan int)
	var wg sync.WaitGroup
	sum := 0
	var mu sync.Mutex
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				mu.Lock()
				sum += n
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 40; i++ {
		work <- i
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			fmt.Println("kill:", err)
			os.Exit(1)
		}
		<-sigs
	}
	close(work)
	wg.Wait()
	fmt.Println("signals 40 sum", sum)
	fmt.Println("own", blocked())
	out, err := exec.Command(os.Args[0], "child").Output()
	if err != nil {
		fmt.Println("child:", err)
		os.Exit(1)
	}
	fmt.Println("child", strings.TrimSpace(string(out)))
}
