// Signals itself (os/signal: the runtime's handler wakes the receiving
// goroutine with a futex call from inside the handler) and runs two
// children with os/exec: itself with the argument "child", and /bin/true.
// Prints one line per stage; exits 1 if a stage fails.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		time.Sleep(10 * time.Millisecond)
		fmt.Println("child done")
		return
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1)
	for i := 0; i < 3; i++ {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			fmt.Println("kill:", err)
			os.Exit(1)
		}
		<-sigs
	}
	fmt.Println("signals: 3")
	out, err := exec.Command(os.Args[0], "child").Output()
	if err != nil {
		fmt.Println("exec:", err)
		os.Exit(1)
	}
	fmt.Print(string(out))
	if err := exec.Command("/bin/true").Run(); err != nil {
		fmt.Println("true:", err)
		os.Exit(1)
	}
	fmt.Println("parent done")
}
