// Makes the calls a server makes around its requests, through package
// syscall's one way in: a directory with files created, written, synced,
// stat-ed, renamed and removed; a TCP listener on loopback with clients
// that connect, exchange a line and close; the machine's name and random
// bytes. Prints what it saw; exits 1 if a step fails.
package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

func must(err error) {
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func files(dir string) {
	must(os.MkdirAll(dir, 0o755))
	for i := 0; i < 20; i++ {
		name := filepath.Join(dir, fmt.Sprintf("f%d", i))
		f, err := os.Create(name)
		must(err)
		_, err = f.WriteString("data\n")
		must(err)
		must(f.Sync())
		must(f.Close())
		info, err := os.Stat(name)
		must(err)
		if info.Size() != 5 {
			fmt.Println("size", info.Size())
			os.Exit(1)
		}
		must(os.Rename(name, name+".old"))
		must(os.Remove(name + ".old"))
	}
	must(os.Remove(dir))
	fmt.Println("files done")
}

func sockets() {
	ln, err := net.Listen("tcp", "127.0.0.1:7300")
	must(err)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			c, err := ln.Accept()
			must(err)
			line, err := bufio.NewReader(c).ReadString('\n')
			must(err)
			_, err = c.Write([]byte(line))
			must(err)
			must(c.Close())
		}
		close(done)
	}()
	for i := 0; i < 10; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:7300")
		must(err)
		_, err = fmt.Fprintf(c, "ping %d\n", i)
		must(err)
		line, err := bufio.NewReader(c).ReadString('\n')
		must(err)
		if line != fmt.Sprintf("ping %d\n", i) {
			fmt.Println("echo", line)
			os.Exit(1)
		}
		must(c.Close())
	}
	<-done
	must(ln.Close())
	fmt.Println("sockets done")
}

func main() {
	files(filepath.Join(os.TempDir(), fmt.Sprintf("faultline-files-%d", os.Getpid())))
	sockets()
	host, err := os.Hostname()
	must(err)
	b := make([]byte, 8)
	_, err = rand.Read(b)
	must(err)
	fmt.Printf("host %s, random %x\n", host, b)
}
