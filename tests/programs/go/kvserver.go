// kvserver-go: the Rust tests/services/kvserver server in Go (stdlib only),
// so faultline's crash tests cover the Go runtime end to end. Same flags,
// protocol, log format, recovery and bug switches; see
// tests/services/README.md.
//
// Usage: kvserver-go --listen ADDR --data DIR
//
//	[--bug ack-before-fsync|no-dir-fsync|ignore-fsync-error]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	logName = "wal.log"
	tmpName = "wal.log.tmp"
	// How often --bug ack-before-fsync syncs the log.
	syncInterval = 5 * time.Millisecond
	// Pause between fsync retries under --bug ignore-fsync-error.
	retryPause = time.Millisecond
	usage      = "usage: kvserver-go --listen ADDR --data DIR " +
		"[--bug ack-before-fsync|no-dir-fsync|ignore-fsync-error]"
)

// The --bug switches. Each cuts one durability corner that only a crash or
// an fsync error exposes.
const (
	bugNone = ""
	// Ack right after write(); a goroutine fdatasyncs every 5 ms.
	bugAckBeforeFsync = "ack-before-fsync"
	// Never fsync the data directory: the log's creation (and recovery's
	// rename) may not survive a crash.
	bugNoDirFsync = "no-dir-fsync"
	// Retry a failed fdatasync until it succeeds, then ack: Linux dropped
	// the dirty pages, so the retry succeeds without the data.
	bugIgnoreFsyncError = "ignore-fsync-error"
)

func main() {
	listen, data, bug, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "kvserver-go: %v\n%s\n", err, usage)
		os.Exit(1)
	}
	wal, records, discarded, err := openWal(data, bug != bugNoDirFsync)
	if err != nil {
		fail(fmt.Sprintf("opening %s/%s", data, logName), err)
	}
	store := startStore(wal, records, bug)
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		fail("listening on "+listen, err)
	}
	shown := bug
	if shown == bugNone {
		shown = "none"
	}
	fmt.Printf("kvserver-go: listening on %s, replayed %d puts (%d keys, %d torn bytes dropped), bug %s\n",
		listen, len(records), len(store.m), discarded, shown)
	for {
		conn, err := listener.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kvserver-go: accept: %v\n", err)
			continue
		}
		go func() {
			if err := serve(conn, store); err != nil {
				fmt.Fprintf(os.Stderr, "kvserver-go: connection: %v\n", err)
			}
		}()
	}
}

// parseArgs reads --flag value pairs; every flag takes a value.
func parseArgs(args []string) (listen, data, bug string, err error) {
	values := map[string]string{}
	for i := 0; i < len(args); i += 2 {
		switch args[i] {
		case "--listen", "--data", "--bug":
		default:
			return "", "", "", fmt.Errorf("unknown argument %q", args[i])
		}
		if i+1 == len(args) {
			return "", "", "", fmt.Errorf("%s needs a value", args[i])
		}
		values[args[i]] = args[i+1]
	}
	for _, flag := range []string{"--listen", "--data"} {
		if values[flag] == "" {
			return "", "", "", fmt.Errorf("missing %s", flag)
		}
	}
	switch bug = values["--bug"]; bug {
	case bugNone, bugAckBeforeFsync, bugNoDirFsync, bugIgnoreFsyncError:
	default:
		return "", "", "", fmt.Errorf("unknown bug %q (ack-before-fsync, no-dir-fsync, ignore-fsync-error)", bug)
	}
	return values["--listen"], values["--data"], bug, nil
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "kvserver-go: %s: %v\n", what, err)
	os.Exit(1)
}

// isValue: a non-empty token of printable, non-space ASCII.
func isValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}

// isKey: a value without '=' (the log's separator).
func isKey(s string) bool {
	return isValue(s) && !strings.Contains(s, "=")
}

// wal is DIR/wal.log opened with O_APPEND. fd is kept for fdatasync
// (os.File.Sync is fsync; the Rust server uses fdatasync).
type wal struct {
	file *os.File
	fd   int
}

// openWal opens DIR/wal.log, creating it if missing. Recovery never trusts
// the bytes it reads to be durable (a torn last line after a crash; data
// the kernel still shows after a failed fsync), so the valid prefix is
// rewritten to wal.log.tmp, fsynced, renamed over wal.log and the directory
// fsynced: from then on exactly what was replayed is durable.
func openWal(dir string, dirFsync bool) (*wal, [][2]string, int, error) {
	path := filepath.Join(dir, logName)
	var records [][2]string
	discarded := 0
	content, err := os.ReadFile(path)
	switch {
	case err == nil:
		var valid int
		records, valid = replay(content)
		discarded = len(content) - valid
		err = rewrite(dir, content[:valid], dirFsync)
	case errors.Is(err, fs.ErrNotExist):
		err = create(dir, dirFsync)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, 0, err
	}
	return &wal{file: file, fd: int(file.Fd())}, records, discarded, nil
}

// replay parses the longest prefix of complete, valid key=value lines and
// returns its puts and length. What follows was never acknowledged.
func replay(content []byte) ([][2]string, int) {
	var records [][2]string
	valid := 0
	for {
		end := bytes.IndexByte(content[valid:], '\n')
		if end < 0 {
			return records, valid
		}
		key, value, ok := strings.Cut(string(content[valid:valid+end]), "=")
		if !ok || !isKey(key) || !isValue(value) {
			return records, valid
		}
		records = append(records, [2]string{key, value})
		valid += end + 1
	}
}

// create makes an empty log whose file and directory entry are durable.
func create(dir string, dirFsync bool) error {
	file, err := os.OpenFile(filepath.Join(dir, logName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := file.Sync(); err != nil {
		return err
	}
	return syncDir(dir, dirFsync)
}

// rewrite durably replaces the log with valid.
func rewrite(dir string, valid []byte, dirFsync bool) error {
	tmp := filepath.Join(dir, tmpName)
	file, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	if _, err := file.Write(valid); err != nil {
		return err
	}
	if err := file.Sync(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, logName)); err != nil {
		return err
	}
	return syncDir(dir, dirFsync)
}

// syncDir fsyncs dir so entries created or renamed in it survive a crash.
func syncDir(dir string, dirFsync bool) error {
	if !dirFsync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// append logs one put with a single write() (not yet durable).
func (w *wal) append(key, value string) error {
	_, err := w.file.WriteString(key + "=" + value + "\n")
	return err
}

// sync makes the appends durable; fdatasync covers the size an append grows.
func (w *wal) sync() error {
	return syscall.Fdatasync(w.fd)
}

// store is the map and its log behind one lock, held by a put from its
// append to its ack decision so nobody acks behind a failed write or fsync.
type store struct {
	mu  sync.Mutex
	m   map[string]string
	wal *wal
	bug string
	// Appended but not yet synced (only under --bug ack-before-fsync).
	dirty bool
	// A write or fsync failed: no put may be acknowledged any more.
	failed bool
}

func startStore(w *wal, records [][2]string, bug string) *store {
	s := &store{m: map[string]string{}, wal: w, bug: bug}
	for _, r := range records {
		s.m[r[0]] = r[1]
	}
	if bug == bugAckBeforeFsync {
		go s.syncEveryInterval()
	}
	return s
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

// putError is why a put was not acknowledged: reply is the protocol's
// answer. Every putError means the server must exit, since the log's tail
// is in a state only a restart's recovery sorts out.
type putError struct {
	reply string
	cause error
}

func (e *putError) Error() string {
	if e.cause == nil {
		return e.reply
	}
	return e.reply + ": " + e.cause.Error()
}

// put logs and applies a put; nil means it may be acknowledged.
func (s *store) put(key, value string) *putError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return &putError{reply: "ERR stopped"}
	}
	if err := s.wal.append(key, value); err != nil {
		s.failed = true
		return &putError{reply: "ERR write", cause: err}
	}
	if err := s.syncPut(); err != nil {
		s.failed = true
		return &putError{reply: "ERR fsync", cause: err}
	}
	s.m[key] = value
	return nil
}

// syncPut is the durability step of a put, where the bugs live.
func (s *store) syncPut() error {
	switch s.bug {
	case bugAckBeforeFsync:
		s.dirty = true
		return nil
	case bugIgnoreFsyncError:
		for {
			err := s.wal.sync()
			if err == nil {
				return nil
			}
			fmt.Fprintf(os.Stderr, "kvserver-go: fdatasync failed (%v), retrying\n", err)
			time.Sleep(retryPause)
		}
	default:
		return s.wal.sync()
	}
}

// syncEveryInterval is --bug ack-before-fsync's background sync; an error
// crash-stops the server as a put's would.
func (s *store) syncEveryInterval() {
	for {
		time.Sleep(syncInterval)
		s.mu.Lock()
		if s.dirty {
			if err := s.wal.sync(); err != nil {
				fmt.Fprintf(os.Stderr, "kvserver-go: background fdatasync failed: %v\n", err)
				os.Exit(1)
			}
			s.dirty = false
		}
		s.mu.Unlock()
	}
}

// serve answers conn's requests in order until EOF. A put that could not be
// made durable is answered ERR and the process exits 1 (crash-stop), so the
// restart's recovery decides what survived.
func serve(conn net.Conn, s *store) error {
	defer conn.Close()
	reader := bufio.NewReader(conn)
	for {
		// A final line without '\n' is not a request: the client died mid-send.
		line, err := reader.ReadString('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var reply string
		words := strings.Split(strings.TrimSuffix(line, "\n"), " ")
		switch {
		case len(words) == 3 && words[0] == "PUT" && isKey(words[1]) && isValue(words[2]):
			if err := s.put(words[1], words[2]); err != nil {
				fmt.Fprintf(os.Stderr, "kvserver-go: PUT %s not durable: %v; exiting\n", words[1], err)
				// Best effort: the client treats a closed connection the same.
				conn.Write([]byte(err.reply + "\n"))
				os.Exit(1)
			}
			reply = "OK"
		case len(words) == 2 && words[0] == "GET" && isKey(words[1]):
			if v, ok := s.get(words[1]); ok {
				reply = "VALUE " + v
			} else {
				reply = "NONE"
			}
		default:
			reply = "ERR usage"
		}
		if _, err := conn.Write([]byte(reply + "\n")); err != nil {
			return err
		}
	}
}
